/** The source of "now"; tests inject a fixed or moving clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until moved. */
export function fixedClock(start: Date | string): Clock & { set(at: Date | string): void } {
  let current = new Date(start);
  return {
    now: () => new Date(current),
    set: (at) => {
      current = new Date(at);
    },
  };
}
