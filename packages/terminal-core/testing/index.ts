/**
 * Test support for code that uses the terminal's data layer: an in-memory device server that
 * speaks the device protocol (pairing, push, pull, shift close) with faults on demand, the
 * organisation settings it hands out, a bridge as the web build has it, and a paired terminal on a
 * fresh fake-indexeddb. Imported by tests, the fault test and benchmarks only; never by the app.
 */
export {
  createFakeDeviceServer,
  type Decide,
  type FakeDeviceServer,
  type Fault,
  type Route,
} from './fake-device-server.ts';
export { TEST_CREDENTIAL, TEST_ORG_GUID, testSettings } from './fake-settings.ts';
export {
  cardCharge,
  DECLINED_VISA,
  freshDbName,
  GOOD_ROUTING,
  pairedTerminal,
  type TestTerminal,
  testBridge,
  VISA,
} from './test-support.ts';
