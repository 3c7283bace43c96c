import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { findJava, javaMajorVersion } from '../src/index.ts';

// Fake `java` binaries: shell scripts answering `-version` the way a JDK does (on stderr).
const root = mkdtempSync(join(tmpdir(), 'sluice-find-java-'));
after(() => rmSync(root, { recursive: true, force: true }));

function fakeJava(dir: string, versionLine: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'java');
  writeFileSync(path, `#!/bin/sh\necho '${versionLine}' >&2\n`);
  chmodSync(path, 0o755);
  return path;
}

const java17 = fakeJava(join(root, 'jdk17', 'bin'), 'openjdk version "17.0.9" 2023-10-17');
const java21 = fakeJava(join(root, 'jdk21', 'bin'), 'openjdk version "21.0.2" 2024-01-16');
const java8 = fakeJava(join(root, 'jdk8', 'bin'), 'java version "1.8.0_312"');
fakeJava(join(root, 'path'), 'java version "1.7.0_80"');

test('SLUICE_JAVA wins over JAVA_HOME', () => {
  assert.equal(findJava({ env: { SLUICE_JAVA: java21, JAVA_HOME: join(root, 'jdk17') } }), java21);
});

test('JAVA_HOME/bin/java when SLUICE_JAVA is not set', () => {
  assert.equal(findJava({ env: { JAVA_HOME: join(root, 'jdk17') } }), java17);
});

test('`java` on PATH when neither is set, or JAVA_HOME has no bin/java', () => {
  // The java on this PATH is too old: the error shows it was the one asked.
  const env = { PATH: join(root, 'path') };
  assert.throws(() => findJava({ env }), /'java -version' says: java version "1\.7\.0_80"/);
  assert.throws(() => findJava({ env: { ...env, JAVA_HOME: join(root, 'no-such-jdk') } }), /1\.7\.0_80/);
});

test('a Java older than 17 is refused, saying what it found and what to set', () => {
  assert.throws(
    () => findJava({ needs: 'Apache Kafka', env: { SLUICE_JAVA: java8 } }),
    (err: Error) =>
      /^Apache Kafka needs Java 17 or later/.test(err.message) &&
      err.message.includes('java version "1.8.0_312"') &&
      err.message.includes('SLUICE_JAVA'),
  );
});

test('a java that cannot be run is refused, naming it and the way out', () => {
  const missing = join(root, 'nowhere', 'java');
  assert.throws(
    () => findJava({ needs: 'Apicurio Registry', otherwise: 'or else X', env: { SLUICE_JAVA: missing } }),
    (err: Error) =>
      err.message.startsWith('Apicurio Registry needs Java 17 or later') &&
      err.message.includes(`'${missing}' could not be run`) &&
      err.message.endsWith('or else X.'),
  );
});

test('javaMajorVersion reads both version schemes', () => {
  assert.equal(javaMajorVersion('openjdk version "17.0.9" 2023-10-17'), 17);
  assert.equal(javaMajorVersion('openjdk version "21" 2023-09-19'), 21);
  assert.equal(javaMajorVersion('java version "1.8.0_312"'), 8);
  assert.equal(javaMajorVersion('no version here'), undefined);
});
