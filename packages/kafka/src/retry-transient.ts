/**
 * Runs a Kafka admin call again while it fails with an error kafkajs marks retriable — right after
 * topic creation a partition may briefly have no leader, or a broker may not know it leads yet.
 * Non-retriable errors, and the last failure after `attempts` tries, are thrown.
 */
export async function retryTransient<T>(run: () => Promise<T>, attempts = 20, delayMs = 250): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await run();
    } catch (err) {
      if (i >= attempts || !(err as { retriable?: boolean }).retriable) throw err;
      await new Promise((r) => setTimeout(r, delayMs));
    }
  }
}
