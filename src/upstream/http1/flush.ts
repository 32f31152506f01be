// One socket write per connection per event-loop turn. Requests that arrive in one uWS poll
// batch are not written one by one: each connection that got some is listed here, and they
// are all written once the turn's poll phase has delivered everything it had (setImmediate
// runs right after it). The list is shared by every node's pool, so a turn costs one
// setImmediate however many connections it touched.

/** A connection with requests added since its last write. */
export interface Flushable {
  /** Writes everything added since the last flush, in one socket write. */
  flush(): void;
}

let due: Flushable[] = [];
let scheduled = false;

/**
 * Lists `c` for this turn's flush. The caller lists each connection once per turn (it keeps a
 * dirty flag that its flush() clears).
 */
export function flushThisTurn(c: Flushable): void {
  due.push(c);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flushAll);
  }
}

function flushAll(): void {
  scheduled = false;
  const list = due;
  due = [];
  for (let i = 0; i < list.length; i++) list[i]!.flush();
}
