// Comma-separated node id lists (X-…-Node, X-…-Nodes-Tried), read without splitting them.

/** Whether the comma-separated `list` names node `id` (no array per sub-batch answer). */
export function listsNode(list: string, id: string): boolean {
  for (let at = list.indexOf(id); at >= 0; at = list.indexOf(id, at + 1)) {
    const end = at + id.length;
    if ((at === 0 || list.charCodeAt(at - 1) === 0x2c) && (end === list.length || list.charCodeAt(end) === 0x2c)) return true;
  }
  return false;
}

/** `tried` with the ids of `list` it lacks added, each once, in order (a batch's nodes asked). */
export function addNodes(tried: string, list: string): string {
  if (list === '') return tried;
  if (tried === '' || tried === list) return list;
  for (const id of list.split(',')) if (!listsNode(tried, id)) tried += ',' + id;
  return tried;
}
