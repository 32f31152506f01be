;; The node's answer to a batch, read 16 bytes at a time (answer-scan.ts says why and how it
;; is used; `npm run gen:wasm` turns this text into answer-wasm.ts).
;;
;; Per block: the quotes' prefix-xor marks the bytes inside strings; brackets and commas
;; outside strings are the only bytes the walk stops at (a 100-call answer has ~10 of them per
;; element against ~100 bytes). At depth 2, the member that follows a `{` or `,` is compared
;; with "id"; its value runs to the next `,` or `}` at that depth.
(module
  (memory (export "memory") 1)

  ;; first index from $i on that is not JSON whitespace, or $end
  (func $ws (param $i i32) (param $end i32) (result i32)
    (local $c i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $c (i32.load8_u (local.get $i)))
        (br_if $done (i32.gt_u (local.get $c) (i32.const 0x20)))
        (br_if $done (i32.eqz (call $isWs (local.get $c))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $i))

  (func $isWs (param $c i32) (result i32)
    (i32.or
      (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x0a)))
      (i32.or (i32.eq (local.get $c) (i32.const 0x0d)) (i32.eq (local.get $c) (i32.const 0x09)))))

  ;; the id's value at $slot ends at $e, whitespace before it left out
  (func $closeId (param $slot i32) (param $e i32)
    (block $done
      (loop $l
        (br_if $done (i32.le_u (local.get $e) (i32.load (local.get $slot))))
        (br_if $done (i32.eqz (call $isWs (i32.load8_u (i32.sub (local.get $e) (i32.const 1))))))
        (local.set $e (i32.sub (local.get $e) (i32.const 1)))
        (br $l)))
    (i32.store offset=4 (local.get $slot) (local.get $e)))

  ;; The elements of the array in [$p, $end): writes each element's top-level id value as a
  ;; (start, end) pair of i32 at $out, followed by 1 when the element has a top-level "error"
  ;; member (else 0), 12 bytes per element, and returns how many elements there are; -1 when the
  ;; text is not an array of objects with exactly one id each or has more than $max elements;
  ;; -2 when it holds a backslash (an escaped quote would end a string early here; the
  ;; caller reads such answers byte by byte). Needs 16 readable bytes after $end.
  (func $ids (export "ids") (param $p i32) (param $end i32) (param $out i32) (param $max i32) (result i32)
    (local $i i32) (local $v v128) (local $q i32) (local $in i32) (local $carry i32) (local $ev i32)
    (local $pos i32) (local $depth i32) (local $k i32) (local $found i32) (local $open i32)
    (local $j i32) (local $slot i32) (local $opens i32) (local $commas i32) (local $bit i32)
    (local.set $i (call $ws (local.get $p) (local.get $end)))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x5b)) (then (return (i32.const -1))))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (local.set $v (v128.load (local.get $i)))
        (if (i8x16.bitmask (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c)))) (then (return (i32.const -2))))
        ;; inside a string: an odd number of quotes before (the opening quote counts, the closing one not)
        (local.set $q (i8x16.bitmask (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))))
        (local.set $in (i32.xor (local.get $q) (i32.shl (local.get $q) (i32.const 1))))
        (local.set $in (i32.xor (local.get $in) (i32.shl (local.get $in) (i32.const 2))))
        (local.set $in (i32.xor (local.get $in) (i32.shl (local.get $in) (i32.const 4))))
        (local.set $in (i32.xor (local.get $in) (i32.shl (local.get $in) (i32.const 8))))
        (local.set $in (i32.and (i32.xor (local.get $in) (local.get $carry)) (i32.const 0xffff)))
        (local.set $carry (i32.and (i32.sub (i32.const 0) (i32.shr_u (local.get $in) (i32.const 15))) (i32.const 0xffff)))
        ;; `c | 0x20` folds '[' onto '{' and ']' onto '}'; each event's kind is its bit in
        ;; $opens or $commas (else it closes), no byte to load again
        (local.set $in (i32.xor (local.get $in) (i32.const -1)))
        (if (i32.gt_u (i32.add (local.get $i) (i32.const 16)) (local.get $end)) (then
          (local.set $in (i32.and (local.get $in) (i32.sub (i32.shl (i32.const 1) (i32.sub (local.get $end) (local.get $i))) (i32.const 1))))))
        (local.set $opens (i32.and (local.get $in)
          (i8x16.bitmask (i8x16.eq (v128.or (local.get $v) (i8x16.splat (i32.const 0x20))) (i8x16.splat (i32.const 0x7b))))))
        (local.set $commas (i32.and (local.get $in)
          (i8x16.bitmask (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x2c))))))
        (local.set $ev (i32.or (i32.or (local.get $opens) (local.get $commas)) (i32.and (local.get $in)
          (i8x16.bitmask (i8x16.eq (v128.or (local.get $v) (i8x16.splat (i32.const 0x20))) (i8x16.splat (i32.const 0x7d)))))))
        (block $next
          (loop $event
            (br_if $next (i32.eqz (local.get $ev)))
            (local.set $pos (i32.add (local.get $i) (i32.ctz (local.get $ev))))
            (local.set $bit (i32.and (local.get $ev) (i32.sub (i32.const 0) (local.get $ev))))
            (local.set $ev (i32.xor (local.get $ev) (local.get $bit)))
            (if (i32.and (local.get $commas) (local.get $bit))
              (then
                ;; a comma: only those between an element's members matter
                (br_if $event (i32.ne (local.get $depth) (i32.const 2)))
                (if (local.get $open) (then
                  (call $closeId (local.get $slot) (local.get $pos))
                  (local.set $open (i32.const 0)))))
              (else
                (if (i32.and (local.get $opens) (local.get $bit))
                  (then
                    (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
                    (br_if $event (i32.ne (local.get $depth) (i32.const 2)))
                    ;; an element opens: it must be an object
                    (if (i32.ne (i32.load8_u (local.get $pos)) (i32.const 0x7b)) (then (return (i32.const -1))))
                    (if (i32.ge_u (local.get $k) (local.get $max)) (then (return (i32.const -1))))
                    (local.set $slot (i32.add (local.get $out) (i32.mul (local.get $k) (i32.const 12))))
                    (i32.store offset=8 (local.get $slot) (i32.const 0))
                    (local.set $k (i32.add (local.get $k) (i32.const 1)))
                    (local.set $found (i32.const 0)))
                  (else
                    (if (i32.eq (local.get $depth) (i32.const 2)) (then
                      ;; an element closes: it had its id
                      (if (local.get $open) (then
                        (call $closeId (local.get $slot) (local.get $pos))
                        (local.set $open (i32.const 0))))
                      (if (i32.eqz (local.get $found)) (then (return (i32.const -1))))))
                    (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
                    (if (i32.eqz (local.get $depth)) (then
                      ;; the array closes: nothing but whitespace may follow
                      (if (i32.ne (call $ws (i32.add (local.get $pos) (i32.const 1)) (local.get $end)) (local.get $end)) (then (return (i32.const -1))))
                      (return (local.get $k))))
                    (br $event)))))
            ;; after the `{` of an element or a `,` between its members: is the next member "id"?
            (local.set $j (i32.add (local.get $pos) (i32.const 1)))
            (if (i32.le_u (i32.load8_u (local.get $j)) (i32.const 0x20)) (then (local.set $j (call $ws (local.get $j) (local.get $end)))))
            (if (i32.eq (i32.load (local.get $j)) (i32.const 0x22646922)) (then
              (local.set $j (call $ws (i32.add (local.get $j) (i32.const 4)) (local.get $end)))
              (if (i32.or (local.get $found) (i32.ne (i32.load8_u (local.get $j)) (i32.const 0x3a))) (then (return (i32.const -1))))
              (i32.store (local.get $slot) (call $ws (i32.add (local.get $j) (i32.const 1)) (local.get $end)))
              (local.set $found (i32.const 1))
              (local.set $open (i32.const 1))))
            ;; or "error": the element is an error answer (usage books it so, docs/usage.md)
            (if (i32.and
                  (i32.eq (i32.load (local.get $j)) (i32.const 0x72726522))
                  (i32.eq (i32.and (i32.load offset=4 (local.get $j)) (i32.const 0xffffff)) (i32.const 0x22726f)))
              (then (i32.store offset=8 (local.get $slot) (i32.const 1))))
            (br $event)))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $block)))
    (i32.const -1))
)
