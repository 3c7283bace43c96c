// One `exit` hook for the process: the last-resort, synchronous cleanup of what the local runtimes
// started (SIGKILL their servers, remove their dirs) when the owner exits without disposing of them.

const hooks = new Set<() => void>();
let installed = false;

/** Runs `fn` when the process exits (synchronously, in registration order); the returned function unregisters it. */
export function atExit(fn: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', () => {
      for (const hook of hooks) {
        try {
          hook();
        } catch {
          // best effort: the other hooks still run
        }
      }
    });
  }
  hooks.add(fn);
  return () => hooks.delete(fn);
}
