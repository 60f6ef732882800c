/**
 * A development tool's snapshot from a Corridor child: SIGUSR2 asks it to write the file (its
 * cumulative figures as one JSON line), and the bench reads it back once it is complete.
 */
import fs from 'node:fs';

/** Asks the child for its figures so far and reads them (waits up to 5 s for the file). */
export async function childSnapshot<T>(pid: number, file: string, flag: string): Promise<T> {
  fs.rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      const text = fs.readFileSync(file, 'utf8');
      if (text.endsWith('\n')) return JSON.parse(text) as T;
    } catch {
      // not written yet
    }
    if (Date.now() > deadline) throw new Error(`${flag}: pid ${pid} wrote nothing to ${file} within 5 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
