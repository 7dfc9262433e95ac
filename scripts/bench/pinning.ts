// Moved to the shared harness; kept so scripts importing the old path still work.
export * from './harness/pinning.js';
