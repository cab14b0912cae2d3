/** What a synchronous call threw (undefined when it returned), for matching its `code` and `message`. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}
