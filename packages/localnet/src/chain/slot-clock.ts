/**
 * The slot clock: calls `onTick` every `slotMs` milliseconds, holding the average period even
 * when a tick runs late, without bursting to catch up after a long stall.
 */

/** A running slot timer. */
export interface SlotClock {
  start(): void;
  stop(): void;
  readonly running: boolean;
}

/** Creates a stopped clock. */
export function createSlotClock(options: { slotMs: number; onTick: () => void }): SlotClock {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let next = 0;
  const schedule = () => {
    const now = performance.now();
    next += options.slotMs;
    // After a stall longer than a slot, re-anchor rather than firing a burst of ticks.
    if (next < now) next = now + options.slotMs;
    timer = setTimeout(tick, Math.max(0, next - now));
  };
  const tick = () => {
    try {
      options.onTick();
    } finally {
      if (running) schedule();
    }
  };
  return {
    start() {
      if (running) return;
      running = true;
      next = performance.now();
      schedule();
    },
    stop() {
      running = false;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
    get running() {
      return running;
    },
  };
}
