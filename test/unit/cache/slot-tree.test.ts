// The slot tree under the account store (src/cache/slot-tree.ts): tips, fork switches, dead
// slots, root advances and the tri-state chain relation.
import t from 'tap';
import { OFF, ON, SlotTree, UNKNOWN } from '../../../src/cache/slot-tree.js';

function linear(tree: SlotTree, from: number, to: number): void {
  for (let s = from; s <= to; s++) tree.status(s, s - 1, 'processed');
}

t.test('tips: -1 until a status; processed follows the chain, confirmed and finalized as told', async (t) => {
  const tree = new SlotTree();
  t.same([tree.tip(0), tree.tip(1), tree.tip(2)], [-1, -1, -1]);
  linear(tree, 100, 105);
  t.same([tree.tip(0), tree.tip(1), tree.tip(2)], [105, -1, -1]);
  tree.status(104, null, 'confirmed');
  tree.status(101, null, 'finalized');
  t.same([tree.processed, tree.confirmed, tree.root], [105, 104, 101]);
  tree.status(103, null, 'confirmed');
  t.equal(tree.confirmed, 104, 'confirmed never goes back');
  tree.status(106, null, 'finalized');
  t.same([tree.processed, tree.confirmed, tree.root], [106, 106, 106], 'a root above the confirmed tip lifts it');
});

t.test('relation: the chain set, slots off it, and links not known', async (t) => {
  const tree = new SlotTree();
  linear(tree, 100, 103);
  tree.status(104, 102, 'processed'); // a fork off 102
  t.equal(tree.processed, 104);
  t.equal(tree.relation(102, 104), ON);
  t.equal(tree.relation(103, 104), OFF);
  t.equal(tree.relation(104, 104), ON);
  t.equal(tree.relation(99, 104), ON, '99 is 100s parent: linked');
  t.equal(tree.relation(98, 104), UNKNOWN, 'below the first link nothing is known');
  t.equal(tree.relation(101, 103), ON, 'a slot off the chain: walked');
  t.equal(tree.relation(102, 103), ON);
  tree.status(101, null, 'finalized');
  t.equal(tree.relation(50, 104), ON, 'below the root: the store keeps only the root chain');
  t.equal(tree.descends(104, 101), ON);
  t.equal(tree.descends(103, 102), ON);
  t.equal(tree.descends(104, 103), OFF);
});

t.test('processed on a fork that does not descend from confirmed is not the tip until it does', async (t) => {
  const tree = new SlotTree();
  linear(tree, 100, 102);
  tree.status(102, null, 'confirmed');
  tree.status(103, 101, 'processed'); // off confirmed
  t.equal(tree.processed, 102);
  tree.status(104, 102, 'processed');
  t.equal(tree.processed, 104);
  tree.status(105, 103, 'processed');
  t.equal(tree.processed, 104, 'still off the confirmed fork');
});

t.test('confirmed moving onto the other fork switches processed', async (t) => {
  const tree = new SlotTree();
  linear(tree, 100, 101);
  tree.status(101, null, 'confirmed');
  tree.status(102, 101, 'processed'); // fork B
  tree.status(103, 101, 'processed'); // fork A
  tree.status(105, 103, 'processed'); // A
  tree.status(104, 102, 'processed'); // B
  t.equal(tree.processed, 105);
  tree.status(104, null, 'confirmed');
  t.equal(tree.processed, 104);
  t.equal(tree.relation(103, 104), OFF);
  tree.status(102, null, 'finalized');
  t.same([...tree.dropped].sort(), [103, 105], 'the other fork is pruned');
  t.ok(tree.isGone(105));
  tree.status(106, 105, 'processed');
  t.same(tree.dropped, [106], 'a child of a pruned slot is gone at once');
  t.equal(tree.processed, 104);
});

t.test('dead takes out the slot and its descendants, and processed goes back', async (t) => {
  const tree = new SlotTree();
  linear(tree, 100, 103);
  tree.status(101, null, 'confirmed');
  tree.status(104, 103, 'processed');
  tree.status(105, 102, 'processed');
  t.equal(tree.processed, 105);
  tree.status(103, null, 'dead');
  t.same([...tree.dropped].sort(), [103, 104]);
  t.equal(tree.processed, 105);
  tree.status(105, null, 'dead');
  t.equal(tree.processed, 102, 'back to the highest live slot');
  tree.status(101, null, 'dead');
  t.equal(tree.processed, 102, 'a confirmed slot cannot die');
  t.same(tree.dropped, []);
  tree.status(104, 103, 'processed');
  t.equal(tree.processed, 102, 'events of a dead slot are ignored');
});

t.test('root advance: rootRelation and pruning keep only the slots above the root', async (t) => {
  const tree = new SlotTree();
  linear(tree, 100, 140);
  tree.status(120, 110, 'processed'); // never: 120 already linked to 119; the first link wins
  tree.status(110, null, 'finalized');
  t.equal(tree.root, 110);
  t.equal(tree.rootRelation(110), ON);
  t.equal(tree.rootRelation(99), ON);
  t.equal(tree.rootRelation(98), UNKNOWN, 'the first advance cannot place slots below the first link');
  t.notOk(tree.lastAdvanceLinked);
  tree.status(130, null, 'finalized');
  t.ok(tree.lastAdvanceLinked);
  t.equal(tree.rootRelation(105), ON);
  t.equal(tree.size, 11, 'slots 130..140');
  t.equal(tree.processed, 140);
});
