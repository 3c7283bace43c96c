// Preloaded into every service the runner starts (`node --import tsx --import parent-watch.ts`):
// the services run in their own process group (so Ctrl-C reaches only the runner, which stops them
// in order), and this makes a service shut down gracefully if the runner itself disappears
// (SIGKILL, crash), so no service is ever left behind.
const parent = process.ppid;
const timer = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(timer);
  process.kill(process.pid, 'SIGTERM');
}, 500);
timer.unref();
