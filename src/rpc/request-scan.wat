;; validate.ts's scanRequest as WebAssembly (request-scan.ts says how it is used; `npm run
;; gen:wasm` turns this text into request-scan-wasm.ts). Same grammar, same layout, same
;; order of checks; strings are read 16 bytes at a time. What it leaves to the JavaScript
;; scanner ($fb set): member names written with escapes, nesting deeper than its stack.
;;
;; Memory: the body at 0 (16 zero bytes after it), then the regions request() is given.
;; Whitespace is skipped inline when the next byte is above space (compact JSON has none):
;; calls are not inlined by every V8 this runs on.
(module
  (memory (export "memory") 1)
  (global $esc (mut i32) (i32.const 0))   ;; the last string held an escape
  (global $fb (mut i32) (i32.const 0))    ;; left to the JavaScript scanner
  (global $sb (mut i32) (i32.const 0))    ;; container stack: base, capacity
  (global $scap (mut i32) (i32.const 0))
  (global $rs (mut i32) (i32.const 0))    ;; spans (2 i32 per call)
  (global $rm (mut i32) (i32.const 0))    ;; members (8 i32 per call)
  (global $rf (mut i32) (i32.const 0))    ;; flags (1 byte per call)
  (global $count (mut i32) (i32.const 0))
  (global $recorded (mut i32) (i32.const 0))
  (global $batch (mut i32) (i32.const 0))


  (func $isWs (param $c i32) (result i32)
    (i32.or
      (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x0a)))
      (i32.or (i32.eq (local.get $c) (i32.const 0x0d)) (i32.eq (local.get $c) (i32.const 0x09)))))

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

  (func $isHex (param $c i32) (result i32)
    (i32.or
      (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10))
      (i32.lt_u (i32.sub (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x61)) (i32.const 6))))

  ;; end of the valid string whose quote is at $i, or -1; sets $esc
  (func $str (param $i i32) (param $end i32) (result i32)
    (local $v v128) (local $m i32) (local $c i32) (local $d i32)
    (global.set $esc (i32.const 0))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (loop $l
      (if (i32.ge_u (local.get $i) (local.get $end)) (then (return (i32.const -1))))
      (local.set $v (v128.load (local.get $i)))
      ;; the bytes that are not plain: quote, backslash, control characters
      (local.set $m (i8x16.bitmask (v128.or (v128.or
        (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
        (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
        (i8x16.lt_u (local.get $v) (i8x16.splat (i32.const 0x20))))))
      (if (i32.eqz (local.get $m)) (then
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $l)))
      (local.set $i (i32.add (local.get $i) (i32.ctz (local.get $m))))
      (if (i32.ge_u (local.get $i) (local.get $end)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $i)))
      (if (i32.eq (local.get $c) (i32.const 0x22)) (then (return (i32.add (local.get $i) (i32.const 1)))))
      (if (i32.ne (local.get $c) (i32.const 0x5c)) (then (return (i32.const -1))))
      (global.set $esc (i32.const 1))
      (local.set $d (i32.load8_u (i32.add (local.get $i) (i32.const 1))))
      (if (i32.eq (local.get $d) (i32.const 0x75)) (then
        (if (i32.ge_s (i32.add (local.get $i) (i32.const 5)) (local.get $end)) (then (return (i32.const -1))))
        (if (i32.eqz (i32.and
              (i32.and (call $isHex (i32.load8_u offset=2 (local.get $i))) (call $isHex (i32.load8_u offset=3 (local.get $i))))
              (i32.and (call $isHex (i32.load8_u offset=4 (local.get $i))) (call $isHex (i32.load8_u offset=5 (local.get $i))))))
          (then (return (i32.const -1))))
        (local.set $i (i32.add (local.get $i) (i32.const 6)))
        (br $l)))
      (if (i32.or
            (i32.or (i32.or (i32.eq (local.get $d) (i32.const 0x22)) (i32.eq (local.get $d) (i32.const 0x5c)))
                    (i32.or (i32.eq (local.get $d) (i32.const 0x2f)) (i32.eq (local.get $d) (i32.const 0x62))))
            (i32.or (i32.or (i32.eq (local.get $d) (i32.const 0x66)) (i32.eq (local.get $d) (i32.const 0x6e)))
                    (i32.or (i32.eq (local.get $d) (i32.const 0x72)) (i32.eq (local.get $d) (i32.const 0x74)))))
        (then
          (local.set $i (i32.add (local.get $i) (i32.const 2)))
          (br $l)))
      (return (i32.const -1)))
    (i32.const -1))

  (func $digits (param $i i32) (param $end i32) (result i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (br_if $done (i32.ge_u (i32.sub (i32.load8_u (local.get $i)) (i32.const 0x30)) (i32.const 10)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $i))

  ;; end of the valid number at $i, or -1
  (func $num (param $i i32) (param $end i32) (result i32)
    (local $c i32) (local $j i32)
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2d)) (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
    (local.set $c (i32.load8_u (local.get $i)))
    (if (i32.ge_u (local.get $i) (local.get $end)) (then (local.set $c (i32.const 0))))
    (if (i32.eq (local.get $c) (i32.const 0x30))
      (then (local.set $i (i32.add (local.get $i) (i32.const 1))))
      (else
        (if (i32.lt_u (i32.sub (local.get $c) (i32.const 0x31)) (i32.const 9))
          (then (local.set $i (call $digits (i32.add (local.get $i) (i32.const 1)) (local.get $end))))
          (else (return (i32.const -1))))))
    (if (i32.and (i32.lt_u (local.get $i) (local.get $end)) (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2e))) (then
      (local.set $j (call $digits (i32.add (local.get $i) (i32.const 1)) (local.get $end)))
      (if (i32.eq (local.get $j) (i32.add (local.get $i) (i32.const 1))) (then (return (i32.const -1))))
      (local.set $i (local.get $j))))
    (if (i32.and (i32.lt_u (local.get $i) (local.get $end)) (i32.eq (i32.or (i32.load8_u (local.get $i)) (i32.const 0x20)) (i32.const 0x65))) (then
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (local.set $c (i32.load8_u (local.get $i)))
      (if (i32.or (i32.eq (local.get $c) (i32.const 0x2b)) (i32.eq (local.get $c) (i32.const 0x2d))) (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
      (local.set $j (call $digits (local.get $i) (local.get $end)))
      (if (i32.eq (local.get $j) (local.get $i)) (then (return (i32.const -1))))
      (local.set $i (local.get $j))))
    (local.get $i))

  (func $lit (param $i i32) (param $end i32) (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $i)))
    ;; true, null: 4 bytes; false: 5
    (if (i32.eq (local.get $c) (i32.const 0x74)) (then
      (return (select (i32.add (local.get $i) (i32.const 4)) (i32.const -1)
        (i32.and (i32.lt_s (i32.add (local.get $i) (i32.const 3)) (local.get $end)) (i32.eq (i32.load (local.get $i)) (i32.const 0x65757274)))))))
    (if (i32.eq (local.get $c) (i32.const 0x6e)) (then
      (return (select (i32.add (local.get $i) (i32.const 4)) (i32.const -1)
        (i32.and (i32.lt_s (i32.add (local.get $i) (i32.const 3)) (local.get $end)) (i32.eq (i32.load (local.get $i)) (i32.const 0x6c6c756e)))))))
    (if (i32.eq (local.get $c) (i32.const 0x66)) (then
      (return (select (i32.add (local.get $i) (i32.const 5)) (i32.const -1)
        (i32.and (i32.lt_s (i32.add (local.get $i) (i32.const 4)) (local.get $end))
          (i32.and (i32.eq (i32.load (local.get $i)) (i32.const 0x736c6166)) (i32.eq (i32.load8_u offset=4 (local.get $i)) (i32.const 0x65))))))))
    (i32.const -1))

  (func $scalar (param $i i32) (param $end i32) (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $i)))
    (if (i32.eq (local.get $c) (i32.const 0x22)) (then (return (call $str (local.get $i) (local.get $end)))))
    (if (i32.or (i32.eq (local.get $c) (i32.const 0x2d)) (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10)))
      (then (return (call $num (local.get $i) (local.get $end)))))
    (call $lit (local.get $i) (local.get $end)))

  ;; a member name and its colon inside an object: index of the value, or -1
  (func $key (param $i i32) (param $end i32) (result i32)
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22)) (then (return (i32.const -1))))
    (local.set $i (call $str (local.get $i) (local.get $end)))
    (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const -1))))
    (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x3a)) (then (return (i32.const -1))))
    (call $ws (i32.add (local.get $i) (i32.const 1)) (local.get $end)))

  ;; end of the valid value at $i (no leading whitespace), or -1; containers on the stack
  (func $value (param $i i32) (param $end i32) (result i32)
    (local $c i32) (local $d i32) (local $depth i32) (local $top i32)
    (local.set $c (i32.load8_u (local.get $i)))
    (if (i32.and (i32.ne (local.get $c) (i32.const 0x7b)) (i32.ne (local.get $c) (i32.const 0x5b)))
      (then (return (call $scalar (local.get $i) (local.get $end)))))
    (loop $start
      (block $ended
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x7b)) (i32.eq (local.get $c) (i32.const 0x5b)))
          (then
            (if (i32.ge_u (local.get $depth) (global.get $scap)) (then
              (global.set $fb (i32.const 1))
              (return (i32.const -1))))
            (i32.store8 (i32.add (global.get $sb) (local.get $depth)) (local.get $c))
            (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1))) (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
            (local.set $d (i32.load8_u (local.get $i)))
            (if (i32.and (i32.lt_u (local.get $i) (local.get $end)) (i32.eq (local.get $d) (i32.add (local.get $c) (i32.const 2))))
              (then
                ;; empty: {} or []
                (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (br $ended)))
            (if (i32.eq (local.get $c) (i32.const 0x7b)) (then
              (local.set $i (call $key (local.get $i) (local.get $end)))
              (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const -1))))))
            (if (i32.ge_u (local.get $i) (local.get $end)) (then (return (i32.const -1))))
            (local.set $c (i32.load8_u (local.get $i)))
            (br $start))
          (else
            (local.set $i (call $scalar (local.get $i) (local.get $end)))
            (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const -1)))))))
      ;; a value ended at $i: close containers until the next value starts
      (block $next
        (loop $close
          (if (i32.eqz (local.get $depth)) (then (return (local.get $i))))
          (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
          (local.set $d (i32.load8_u (local.get $i)))
          (if (i32.ge_u (local.get $i) (local.get $end)) (then (local.set $d (i32.const 0))))
          (local.set $top (i32.load8_u (i32.sub (i32.add (global.get $sb) (local.get $depth)) (i32.const 1))))
          (if (i32.eq (local.get $d) (i32.const 0x2c)) (then
            (local.set $i (i32.add (local.get $i) (i32.const 1))) (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
            (if (i32.eq (local.get $top) (i32.const 0x7b)) (then
              (local.set $i (call $key (local.get $i) (local.get $end)))
              (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const -1))))))
            (br $next)))
          ;; '}' closes '{' and ']' closes '[': each is its opener plus 2
          (if (i32.eq (local.get $d) (i32.add (local.get $top) (i32.const 2))) (then
            (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $close)))
          (return (i32.const -1))))
      (if (i32.ge_u (local.get $i) (local.get $end)) (then (return (i32.const -1))))
      (local.set $c (i32.load8_u (local.get $i)))
      (br $start))
    (i32.const -1))

  ;; "jsonrpc", "method", "id" or "params" at $i, unescaped: slot | length << 8; else 0
  (func $known (param $i i32) (param $end i32) (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u offset=1 (local.get $i)))
    (if (i32.eq (local.get $c) (i32.const 0x69)) (then
      (if (i32.and (i32.lt_s (i32.add (local.get $i) (i32.const 3)) (local.get $end)) (i32.eq (i32.load (local.get $i)) (i32.const 0x22646922)))
        (then (return (i32.const 0x402))))
      (return (i32.const 0))))
    (if (i32.eq (local.get $c) (i32.const 0x6d)) (then
      (if (i32.and (i32.lt_s (i32.add (local.get $i) (i32.const 7)) (local.get $end)) (i64.eq (i64.load (local.get $i)) (i64.const 0x22646f6874656d22)))
        (then (return (i32.const 0x801))))
      (return (i32.const 0))))
    (if (i32.eq (local.get $c) (i32.const 0x70)) (then
      (if (i32.and (i32.lt_s (i32.add (local.get $i) (i32.const 7)) (local.get $end)) (i64.eq (i64.load (local.get $i)) (i64.const 0x22736d6172617022)))
        (then (return (i32.const 0x803))))
      (return (i32.const 0))))
    (if (i32.eq (local.get $c) (i32.const 0x6a)) (then
      (if (i32.and (i32.lt_s (i32.add (local.get $i) (i32.const 8)) (local.get $end))
            (i32.and (i64.eq (i64.load (local.get $i)) (i64.const 0x6370726e6f736a22)) (i32.eq (i32.load8_u offset=8 (local.get $i)) (i32.const 0x22))))
        (then (return (i32.const 0x900))))))
    (i32.const 0))

  ;; length of the method string at $i when its bytes are call $prev's method string's; else 0
  (func $sameMethod (param $i i32) (param $end i32) (param $prev i32) (result i32)
    (local $ps i32) (local $n i32) (local $k i32) (local $at i32)
    (local.set $at (i32.add (global.get $rm) (i32.add (i32.shl (local.get $prev) (i32.const 5)) (i32.const 8))))
    (local.set $ps (i32.load (local.get $at)))
    (if (i32.lt_s (local.get $ps) (i32.const 0)) (then (return (i32.const 0))))
    (if (i32.ne (i32.load8_u (local.get $ps)) (i32.const 0x22)) (then (return (i32.const 0))))
    (local.set $n (i32.sub (i32.load offset=4 (local.get $at)) (local.get $ps)))
    (if (i32.gt_s (i32.add (local.get $i) (local.get $n)) (local.get $end)) (then (return (i32.const 0))))
    ;; bytes 1..n-1 (the quote at 0 is known): 8 at a time, then one by one
    (local.set $k (i32.const 1))
    (block $done8
      (loop $l8
        (br_if $done8 (i32.gt_s (i32.add (local.get $k) (i32.const 8)) (local.get $n)))
        (if (i64.ne (i64.load (i32.add (local.get $i) (local.get $k))) (i64.load (i32.add (local.get $ps) (local.get $k))))
          (then (return (i32.const 0))))
        (local.set $k (i32.add (local.get $k) (i32.const 8)))
        (br $l8)))
    (block $done
      (loop $l
        (br_if $done (i32.ge_s (local.get $k) (local.get $n)))
        (if (i32.ne (i32.load8_u (i32.add (local.get $i) (local.get $k))) (i32.load8_u (i32.add (local.get $ps) (local.get $k))))
          (then (return (i32.const 0))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $l)))
    (local.get $n))

  ;; $value for a call's member (not a string), with the shapes calls carry most read here
;; without the generic walk: an integer id (digits not followed by a fraction or exponent)
;; and params of one plain string, ["..."].
  (func $memberValue (param $i i32) (param $end i32) (result i32)
    (local $j i32) (local $c i32)
    (local.set $c (i32.load8_u (local.get $i)))
    (if (i32.lt_u (i32.sub (local.get $c) (i32.const 0x31)) (i32.const 9)) (then
      (local.set $j (i32.add (local.get $i) (i32.const 1)))
      (block $done
        (loop $l
          (br_if $done (i32.ge_u (local.get $j) (local.get $end)))
          (local.set $c (i32.load8_u (local.get $j)))
          (br_if $done (i32.ge_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10)))
          (local.set $j (i32.add (local.get $j) (i32.const 1)))
          (br $l)))
      ;; `,` or `}` next (or the end): the number ends here; else the full grammar decides
      (if (i32.or (i32.ge_u (local.get $j) (local.get $end))
            (i32.or (i32.eq (local.get $c) (i32.const 0x2c)) (i32.eq (local.get $c) (i32.const 0x7d))))
        (then (return (local.get $j))))
      (return (call $value (local.get $i) (local.get $end)))))
    (if (i32.and (i32.eq (local.get $c) (i32.const 0x5b)) (i32.eq (i32.load8_u offset=1 (local.get $i)) (i32.const 0x22))) (then
      (local.set $j (call $str (i32.add (local.get $i) (i32.const 1)) (local.get $end)))
      (if (i32.and (i32.ge_s (local.get $j) (i32.const 0)) (i32.lt_u (local.get $j) (local.get $end))) (then
        (if (i32.eq (i32.load8_u (local.get $j)) (i32.const 0x5d)) (then (return (i32.add (local.get $j) (i32.const 1)))))))))
    (call $value (local.get $i) (local.get $end)))

;; end of the call object at $i (a brace), or -1; records call $call's members and flags
  (func $call (param $i i32) (param $end i32) (param $call i32) (result i32)
    (local $flags i32) (local $slot i32) (local $known i32) (local $vs i32) (local $c i32)
    (local $n i32) (local $same i32) (local $at i32) (local $d i32)
    (local.set $i (i32.add (local.get $i) (i32.const 1))) (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
    (if (i32.and (i32.lt_u (local.get $i) (local.get $end)) (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x7d)))
      (then (return (i32.add (local.get $i) (i32.const 1)))))
    (loop $member
      (if (i32.or (i32.ge_u (local.get $i) (local.get $end)) (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22))) (then (return (i32.const -1))))
      (local.set $known (call $known (local.get $i) (local.get $end)))
      (if (local.get $known)
        (then
          (local.set $slot (i32.and (local.get $known) (i32.const 0xff)))
          (local.set $i (i32.add (local.get $i) (i32.shr_u (local.get $known) (i32.const 8)))))
        (else
          (local.set $i (call $str (local.get $i) (local.get $end)))
          (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const -1))))
          ;; an escaped name may still be one of the four: JavaScript decodes it
          (if (global.get $esc) (then
            (global.set $fb (i32.const 1))
            (return (i32.const -1))))
          (local.set $slot (i32.const -1))))
      (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
      (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x3a)) (then (return (i32.const -1))))
      (local.set $i (i32.add (local.get $i) (i32.const 1))) (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
      (if (i32.ge_u (local.get $i) (local.get $end)) (then (return (i32.const -1))))
      (local.set $vs (local.get $i))
      (local.set $c (i32.load8_u (local.get $i)))
      (local.set $same (i32.const 0))
      (if (i32.eq (local.get $c) (i32.const 0x22))
        (then
          (local.set $n (i32.const 0))
          (if (i32.eqz (local.get $slot))
            (then
              ;; "2.0"
              (if (i32.and (i32.lt_s (i32.add (local.get $i) (i32.const 4)) (local.get $end))
                    (i32.and (i32.eq (i32.load (local.get $i)) (i32.const 0x302e3222)) (i32.eq (i32.load8_u offset=4 (local.get $i)) (i32.const 0x22))))
                (then (local.set $n (i32.const 5)))))
            (else
              (if (i32.and (i32.eq (local.get $slot) (i32.const 1)) (i32.gt_s (local.get $call) (i32.const 0)))
                (then (local.set $n (call $sameMethod (local.get $i) (local.get $end) (i32.sub (local.get $call) (i32.const 1))))))))
          (if (local.get $n)
            (then
              (local.set $same (i32.eq (local.get $slot) (i32.const 1)))
              (global.set $esc (i32.and (local.get $same)
                (i32.ne (i32.and (i32.load8_u (i32.add (global.get $rf) (i32.sub (local.get $call) (i32.const 1)))) (i32.const 1)) (i32.const 0))))
              (local.set $i (i32.add (local.get $i) (local.get $n))))
            (else (local.set $i (call $str (local.get $i) (local.get $end))))))
        (else (local.set $i (call $memberValue (local.get $i) (local.get $end)))))
      (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const -1))))
      (if (i32.ge_s (local.get $slot) (i32.const 0)) (then
        (local.set $at (i32.add (global.get $rm) (i32.add (i32.shl (local.get $call) (i32.const 5)) (i32.shl (local.get $slot) (i32.const 3)))))
        (if (i32.ge_s (i32.load (local.get $at)) (i32.const 0)) (then (local.set $flags (i32.or (local.get $flags) (i32.const 4)))))
        (i32.store (local.get $at) (local.get $vs))
        (i32.store offset=4 (local.get $at) (local.get $i))
        (if (i32.eq (local.get $slot) (i32.const 1)) (then
          (local.set $flags (i32.and (local.get $flags) (i32.const 4)))
          (if (i32.and (i32.eq (local.get $c) (i32.const 0x22)) (global.get $esc)) (then (local.set $flags (i32.or (local.get $flags) (i32.const 1)))))
          (if (local.get $same) (then (local.set $flags (i32.or (local.get $flags) (i32.const 2)))))))))
      (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
      (local.set $d (i32.load8_u (local.get $i)))
      (if (i32.ge_u (local.get $i) (local.get $end)) (then (return (i32.const -1))))
      (if (i32.eq (local.get $d) (i32.const 0x7d)) (then
        (i32.store8 (i32.add (global.get $rf) (local.get $call)) (local.get $flags))
        (return (i32.add (local.get $i) (i32.const 1)))))
      (if (i32.ne (local.get $d) (i32.const 0x2c)) (then (return (i32.const -1))))
      (local.set $i (i32.add (local.get $i) (i32.const 1))) (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
      (br $member))
    (i32.const -1))

  ;; end of the element at $i, or -1; recorded when $call >= 0
  (func $element (param $i i32) (param $end i32) (param $call i32) (result i32)
    (local $at i32) (local $e i32)
    (if (i32.lt_s (local.get $call) (i32.const 0)) (then (return (call $value (local.get $i) (local.get $end)))))
    (local.set $at (i32.add (global.get $rs) (i32.shl (local.get $call) (i32.const 3))))
    (i32.store (local.get $at) (local.get $i))
    (v128.store (i32.add (global.get $rm) (i32.shl (local.get $call) (i32.const 5))) (v128.const i32x4 -1 -1 -1 -1))
    (v128.store offset=16 (i32.add (global.get $rm) (i32.shl (local.get $call) (i32.const 5))) (v128.const i32x4 -1 -1 -1 -1))
    (i32.store8 (i32.add (global.get $rf) (local.get $call)) (i32.const 0))
    (global.set $recorded (i32.add (global.get $recorded) (i32.const 1)))
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x7b))
      (then (local.set $e (call $call (local.get $i) (local.get $end) (local.get $call))))
      (else (local.set $e (call $value (local.get $i) (local.get $end)))))
    (i32.store offset=4 (local.get $at) (local.get $e))
    (local.get $e))

  ;; Validates the body [0, $n) and records its layout in the regions given; records at most
  ;; $limit calls. 1: valid; 0: a JSON syntax error; 2: left to the JavaScript scanner. The
  ;; call count, calls recorded and whether it is a batch go to $hd (3 i32): one call from
  ;; JavaScript in all. The 16 bytes after the body must be zero.
  (func (export "request") (param $n i32) (param $limit i32) (param $sb i32) (param $scap i32)
      (param $rs i32) (param $rm i32) (param $rf i32) (param $hd i32) (result i32)
    (local $r i32)
    (global.set $sb (local.get $sb))
    (global.set $scap (local.get $scap))
    (global.set $rs (local.get $rs))
    (global.set $rm (local.get $rm))
    (global.set $rf (local.get $rf))
    (global.set $fb (i32.const 0))
    (local.set $r (call $scan (local.get $n) (local.get $limit)))
    (i32.store (local.get $hd) (global.get $count))
    (i32.store offset=4 (local.get $hd) (global.get $recorded))
    (i32.store offset=8 (local.get $hd) (global.get $batch))
    (local.get $r))

  (func $scan (param $n i32) (param $limit i32) (result i32)
    (local $i i32) (local $end i32) (local $call i32) (local $d i32) (local $ok i32)
    (global.set $count (i32.const 0))
    (global.set $recorded (i32.const 0))
    (local.set $end (local.get $n))
    (local.set $i (call $ws (i32.const 0) (local.get $end)))
    (block $trimmed
      (loop $l
        (br_if $trimmed (i32.le_u (local.get $end) (local.get $i)))
        (br_if $trimmed (i32.eqz (call $isWs (i32.load8_u (i32.sub (local.get $end) (i32.const 1))))))
        (local.set $end (i32.sub (local.get $end) (i32.const 1)))
        (br $l)))
    (if (i32.eq (local.get $i) (local.get $end)) (then (return (i32.const 0))))
    (global.set $batch (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x5b)))
    (if (i32.eqz (global.get $batch)) (then
      (global.set $count (i32.const 1))
      (local.set $ok (i32.eq
        (call $element (local.get $i) (local.get $end) (select (i32.const 0) (i32.const -1) (i32.gt_s (local.get $limit) (i32.const 0))))
        (local.get $end)))
      (return (select (i32.const 2) (local.get $ok) (global.get $fb)))))
    (local.set $i (i32.add (local.get $i) (i32.const 1))) (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x5d)) (then
      (return (i32.eq (i32.add (local.get $i) (i32.const 1)) (local.get $end)))))
    (loop $next
      (if (i32.ge_u (local.get $i) (local.get $end)) (then (return (i32.const 0))))
      (local.set $call (select (global.get $count) (i32.const -1) (i32.lt_s (global.get $count) (local.get $limit))))
      (global.set $count (i32.add (global.get $count) (i32.const 1)))
      (local.set $i (call $element (local.get $i) (local.get $end) (local.get $call)))
      (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (select (i32.const 2) (i32.const 0) (global.get $fb)))))
      (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
      (local.set $d (i32.load8_u (local.get $i)))
      (if (i32.ge_u (local.get $i) (local.get $end)) (then (return (i32.const 0))))
      (if (i32.eq (local.get $d) (i32.const 0x5d)) (then
        (return (i32.eq (i32.add (local.get $i) (i32.const 1)) (local.get $end)))))
      (if (i32.ne (local.get $d) (i32.const 0x2c)) (then (return (i32.const 0))))
      (local.set $i (i32.add (local.get $i) (i32.const 1))) (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $ws (local.get $i) (local.get $end)))))
      (br $next))
    (i32.const 0))
)
