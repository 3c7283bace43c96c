import type { Consumer } from 'kafkajs';

/**
 * kafkajs leaves the process alive when a consumer crashes without restarting: it stops consuming
 * but still looks healthy. This turns that into a fatal error the service exits on.
 */
export function watchForCrash(consumer: Consumer, onFatal: (err: Error) => void): void {
  consumer.on(consumer.events.CRASH, (event) => {
    const { error, restart } = event.payload as { error: Error; restart: boolean };
    if (!restart) onFatal(error);
  });
}
