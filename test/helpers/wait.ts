/** Polls `condition` until it holds, or fails naming it after `timeoutMs`. */
export async function waitUntil(
  condition: () => Promise<boolean> | boolean,
  timeoutMs = 5000,
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${condition.toString()}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
