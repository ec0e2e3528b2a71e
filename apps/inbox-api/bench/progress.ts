/** A one-line progress bar on stderr. */
export function progressBar(label: string, total: number): { tick(done: number): void; finish(): void } {
  const started = Date.now();
  let last = 0;
  const draw = (done: number) => {
    const ratio = total === 0 ? 1 : done / total;
    const filled = Math.round(ratio * 30);
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? Math.round(done / seconds) : 0;
    process.stderr.write(
      `\r${label} [${'#'.repeat(filled)}${' '.repeat(30 - filled)}] ${(ratio * 100).toFixed(1)}% ${done}/${total} ${rate}/s ${seconds.toFixed(0)}s `,
    );
  };
  return {
    tick(done) {
      if (Date.now() - last > 200 || done === total) {
        last = Date.now();
        draw(done);
      }
    },
    finish() {
      draw(total);
      process.stderr.write('\n');
    },
  };
}
