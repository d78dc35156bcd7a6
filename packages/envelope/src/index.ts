export {
  createOpener,
  createSealer,
  EnvelopeError,
  type EnvelopeErrorCode,
  type EnvelopeKeyPair,
  type EnvelopePrivateJwk,
  type EnvelopePrivateJwkInput,
  generateEnvelopeKeyPair,
  type Opener,
  open,
  type Sealer,
  seal,
} from './envelope.ts';
export * from './signing.ts';
