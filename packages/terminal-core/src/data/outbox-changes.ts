/**
 * Tells listeners that the outbox changed: those of this instance directly, those of other tabs
 * and windows of the same database through a BroadcastChannel (a sync run in one tab answers the
 * item another tab is waiting for). Dexie's liveQuery would do the same, but it only works with
 * the global indexedDB, and this layer also runs on an injected one (Node tests, benchmarks).
 */

export interface OutboxChanges {
  notify(): void;
  subscribe(listener: () => void): () => void;
  close(): void;
}

interface Channel {
  postMessage(message: unknown): void;
  close(): void;
  onmessage: ((event: unknown) => void) | null;
  unref?: () => void;
}

type ChannelConstructor = new (name: string) => Channel;

export function createOutboxChanges(dbName: string): OutboxChanges {
  const listeners = new Set<() => void>();
  const Broadcast = (globalThis as { BroadcastChannel?: ChannelConstructor }).BroadcastChannel;
  let channel: Channel | null = null;

  const fire = () => {
    for (const l of [...listeners]) {
      try {
        l();
      } catch {
        // One listener's fault must not keep the others from hearing.
      }
    }
  };

  /** One channel per instance, to post and to hear (a channel never hears its own messages). */
  const getChannel = (): Channel | null => {
    if (!channel && Broadcast) {
      channel = new Broadcast(`kupah-outbox/${dbName}`);
      channel.onmessage = fire;
      // Node: an open channel must not keep the process alive.
      channel.unref?.();
    }
    return channel;
  };

  return {
    notify() {
      fire();
      getChannel()?.postMessage('changed');
    },
    subscribe(listener) {
      listeners.add(listener);
      getChannel();
      return () => listeners.delete(listener);
    },
    close() {
      listeners.clear();
      channel?.close();
      channel = null;
    },
  };
}
