// Command-line tools the deploy tests run (promtool, helm, kubernetes-validate), found on PATH or
// installed once into the project's cache dir (`sluiceCacheDir()`, like local Kafka), so a second
// run starts them at once.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sluiceCacheDir } from '@sluice/local-runtime';

/**
 * Go packages and versions built when no Debian package is at hand (Prometheus v2.55.1's promtool,
 * Helm v3.16.4). Built inside a scratch module: Prometheus's go.mod has replace directives, which
 * `go install pkg@version` refuses.
 */
export const PROMTOOL_GO = { pkg: 'github.com/prometheus/prometheus/cmd/promtool', version: 'v0.55.1' };
export const HELM_GO = { pkg: 'helm.sh/helm/v3/cmd/helm', version: 'v3.16.4' };
export const KUBERNETES_VALIDATE_VERSION = '1.31.0';

export class MissingToolError extends Error {}

function run(cmd: string, args: string[], cwd?: string, env?: NodeJS.ProcessEnv): { ok: boolean; output: string } {
  const result = spawnSync(cmd, args, { cwd, env: env ?? process.env, encoding: 'utf8', timeout: 15 * 60_000 });
  return {
    ok: result.status === 0,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}`,
  };
}

function onPath(name: string): string | undefined {
  const found = run('sh', ['-c', `command -v ${name}`]);
  return found.ok ? found.output.trim() : undefined;
}

/** Moves a freshly built file into place in one step, so concurrent runs never see half a binary. */
function publish(built: string, target: string): void {
  mkdirSync(join(target, '..'), { recursive: true });
  chmodSync(built, 0o755);
  renameSync(built, target);
}

/** `apt-get download <pkg>` and extract `<binary>` from it (no root needed once apt's lists exist). */
function fromDebian(pkg: string, binary: string, target: string, tries: string[]): boolean {
  if (!onPath('apt-get') || !onPath('dpkg-deb')) return false;
  const work = mkdtempSync(join(sluiceCacheDir(), `.${pkg}-`));
  try {
    const download = run('apt-get', ['download', pkg], work);
    if (!download.ok) {
      tries.push(`apt-get download ${pkg}: ${download.output.trim().split('\n').pop()}`);
      return false;
    }
    const deb = readdirSync(work).find((f) => f.endsWith('.deb'));
    if (!deb || !run('dpkg-deb', ['-x', deb, 'x'], work).ok || !existsSync(join(work, 'x/usr/bin', binary))) {
      tries.push(`${pkg}.deb holds no usr/bin/${binary}`);
      return false;
    }
    publish(join(work, 'x/usr/bin', binary), target);
    return true;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `go build` of `pkg@version` in a scratch module, then into the cache. */
function fromGo(go: { pkg: string; version: string }, binary: string, target: string, tries: string[]): boolean {
  if (!onPath('go')) {
    tries.push('go is not on PATH');
    return false;
  }
  const work = mkdtempSync(join(sluiceCacheDir(), `.${binary}-go-`));
  try {
    process.stderr.write(`# building ${go.pkg}@${go.version} with go (once; cached in ${sluiceCacheDir()})\n`);
    writeFileSync(join(work, 'go.mod'), 'module sluice.local/tools\n\ngo 1.22\n');
    const env = { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' };
    for (const args of [
      ['get', `${go.pkg}@${go.version}`],
      ['build', '-o', binary, go.pkg],
    ]) {
      const step = run('go', args, work, env);
      if (!step.ok) {
        tries.push(`go ${args.join(' ')}: ${step.output.trim().split('\n').pop()}`);
        return false;
      }
    }
    publish(join(work, binary), target);
    return true;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function ensure(binary: string, envVar: string, attempts: ((target: string, tries: string[]) => boolean)[]): string {
  const fromEnv = process.env[envVar];
  if (fromEnv) return fromEnv;
  const path = onPath(binary);
  if (path) return path;
  const target = join(sluiceCacheDir(), 'tools', binary);
  if (existsSync(target)) return target;
  mkdirSync(sluiceCacheDir(), { recursive: true });
  const tries: string[] = [];
  for (const attempt of attempts) if (attempt(target, tries) || existsSync(target)) return target;
  throw new MissingToolError(
    `${binary} is needed by this test and could not be installed into ${target} (${tries.join('; ')}). ` +
      `Put ${binary} on PATH or point ${envVar} at it.`,
  );
}

/** promtool: PATH, `$SLUICE_PROMTOOL`, the cache, else Debian's `prometheus` package (~5 s), else the Go module. */
export function ensurePromtool(): string {
  return ensure('promtool', 'SLUICE_PROMTOOL', [
    (target, tries) => fromDebian('prometheus', 'promtool', target, tries),
    (target, tries) => fromGo(PROMTOOL_GO, 'promtool', target, tries),
  ]);
}

/** helm: PATH, `$SLUICE_HELM`, the cache, else Debian's `helm` package where the release has one, else the Go module. */
export function ensureHelm(): string {
  return ensure('helm', 'SLUICE_HELM', [
    (target, tries) => fromDebian('helm', 'helm', target, tries),
    (target, tries) => fromGo(HELM_GO, 'helm', target, tries),
  ]);
}

/** kubernetes-validate (PyPI) in a venv under the cache dir; a marker file says the install finished. */
export function ensureKubernetesValidate(): string {
  const fromEnv = process.env.SLUICE_KUBERNETES_VALIDATE;
  if (fromEnv) return fromEnv;
  const venv = join(sluiceCacheDir(), 'tools', `kubernetes-validate-${KUBERNETES_VALIDATE_VERSION}`);
  const bin = join(venv, 'bin', 'kubernetes-validate');
  const marker = join(venv, '.installed');
  if (existsSync(marker)) return bin;
  rmSync(venv, { recursive: true, force: true });
  const steps: [string, string[]][] = [
    ['python3', ['-m', 'venv', venv]],
    [join(venv, 'bin', 'pip'), ['install', '--quiet', `kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}`]],
  ];
  for (const [cmd, args] of steps) {
    const step = run(cmd, args);
    if (!step.ok) {
      rmSync(venv, { recursive: true, force: true });
      throw new MissingToolError(
        `kubernetes-validate could not be installed into ${venv} (${cmd} ${args.join(' ')}: ` +
          `${step.output.trim().split('\n').pop()}). Point SLUICE_KUBERNETES_VALIDATE at an installed one.`,
      );
    }
  }
  writeFileSync(marker, '');
  return bin;
}
