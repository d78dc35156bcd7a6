/** `npm run admin -- <command> [flags]`: see admin-cli.ts (or run with --help). */
import { run } from './admin-cli.ts';

process.exitCode = await run(process.argv.slice(2), {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  env: process.env,
});
