/**
 * A value made on first use by an async `load` (a package imported when first needed, so starts
 * that never need it do not load it), made once; a load that fails is forgotten, so the next call
 * tries again instead of failing for the process's life.
 */
export function lazyLoad<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}
