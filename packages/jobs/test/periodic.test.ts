import { startPeriodic } from '../src/index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('startPeriodic', () => {
  it('runs at once, again after each interval, and after a failure; stop waits for the round under way', async () => {
    const errors: unknown[] = [];
    let rounds = 0;
    let running = 0;
    let overlapped = false;
    const periodic = startPeriodic(
      async () => {
        rounds += 1;
        running += 1;
        overlapped ||= running > 1;
        await sleep(30);
        running -= 1;
        if (rounds === 2) throw new Error('round 2 failed');
      },
      { intervalSeconds: 0.05, onError: (error) => errors.push(error) },
    );
    expect(rounds).toBe(1);
    while (rounds < 4) await sleep(10);
    await periodic.stop();
    const stoppedAt = rounds;
    expect(running).toBe(0);
    await sleep(150);
    expect(rounds).toBe(stoppedAt);
    expect(overlapped).toBe(false);
    expect(errors).toEqual([new Error('round 2 failed')]);
  });

  it('runs once with an interval of 0', async () => {
    let rounds = 0;
    const periodic = startPeriodic(
      () => {
        rounds += 1;
        return Promise.resolve();
      },
      { intervalSeconds: 0, onError: () => undefined },
    );
    await sleep(50);
    await periodic.stop();
    expect(rounds).toBe(1);
  });

  it('waits an interval before the first round with startAfterInterval, and runs none when stopped before', async () => {
    let rounds = 0;
    const round = () => {
      rounds += 1;
      return Promise.resolve();
    };
    const later = startPeriodic(round, { intervalSeconds: 0.1, onError: () => undefined, startAfterInterval: true });
    expect(rounds).toBe(0);
    while (rounds < 2) await sleep(10);
    await later.stop();
    rounds = 0;
    const never = startPeriodic(round, { intervalSeconds: 0.1, onError: () => undefined, startAfterInterval: true });
    await never.stop();
    await sleep(150);
    expect(rounds).toBe(0);
  });
});
