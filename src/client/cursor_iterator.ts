// Walks a SCAN-family cursor to its end, yielding every page's items.

/** Yields the items of every page of a cursor, from cursor "0" until the server returns "0". */
export async function* cursorIterator<T>(
  page: (cursor: string) => Promise<[string, T[]]>,
): AsyncIterableIterator<T> {
  let cursor = "0";
  do {
    const [next, items] = await page(cursor);
    cursor = next;
    yield* items;
  } while (cursor !== "0");
}
