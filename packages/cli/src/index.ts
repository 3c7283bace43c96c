export { buildProgram, runCli } from './program.ts';
export { CliError, type CliIo } from './io.ts';
export { buildTestCall, CALL_TYPES, type CallType, type TestCallOptions } from './domain/test-call.ts';
