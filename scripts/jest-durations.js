/**
 * A jest reporter beside the default one: after a run, each test file's duration, slowest first, so
 * that the CI log shows where the time goes (the default reporter names only some slow files).
 */
export default class DurationsReporter {
  #rows = [];

  onTestResult(test, result) {
    const seconds = (result.perfStats.end - result.perfStats.start) / 1000;
    this.#rows.push({ file: test.path.slice(test.context.config.rootDir.length + 1), seconds });
  }

  onRunComplete() {
    if (this.#rows.length === 0) return;
    const total = this.#rows.reduce((sum, row) => sum + row.seconds, 0);
    const lines = this.#rows
      .sort((a, b) => b.seconds - a.seconds)
      .map((row) => `${row.seconds.toFixed(1).padStart(7)} s  ${row.file}`);
    process.stderr.write(
      `Suite durations (${this.#rows.length} files, ${total.toFixed(1)} s summed over workers):\n${lines.join('\n')}\n`,
    );
  }
}
