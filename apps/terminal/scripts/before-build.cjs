/**
 * electron-builder's beforeBuild hook: answering false tells it the app's node_modules are
 * handled elsewhere, so it neither rebuilds nor copies them. Main, preload and renderer are
 * bundled by Vite; the libraries listed under the terminal's "dependencies" (React, Dexie, the
 * workspace packages as TypeScript sources) would otherwise be packed into the asar unused.
 */
module.exports = async function beforeBuild() {
  return false;
};
