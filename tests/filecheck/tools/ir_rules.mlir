// RUN: rev-opt %s --verify-diagnostics --split-input-file

// Upstream MLIR's verifier checks dominance and terminators for every op, and
// so does every revmlir tool, before a pass or the lowering sees the module
// (the lowering used to fail with an internal KeyError or AssertionError).

func.func @before(%m: memref<?xf64>, %i: index) -> f64 {
  // expected-error-re@+1 {{[dominance] 'math.sin' uses %x before 'memref.load' at {{.*}}ir_rules.mlir:{{[0-9]+}}:3 defines it}}
  %y = math.sin %x : f64
  %x = memref.load %m[%i] : memref<?xf64>
  func.return %y : f64
}

// -----

// Across blocks the defining block must dominate the use: ^left does not
// dominate ^join, which ^right also reaches.
func.func @branches(%c: i1, %a: f64) -> f64 {
  cf.cond_br %c, ^left, ^right
^left:
  %x = arith.addf %a, %a : f64
  cf.br ^join
^right:
  cf.br ^join
^join:
  // expected-error@+1 {{[dominance] 'func.return' uses %x, which is defined in a block that does not dominate its use}}
  func.return %x : f64
}

// -----

// A block written before the block defining a value it uses is fine when
// the defining block dominates it (a loop's exit after its header), and a
// block nothing branches to is not checked, as upstream.
func.func @loop(%n: i64) -> i64 {
  %zero = arith.constant 0 : i64
  cf.br ^head(%zero : i64)
^exit:
  func.return %i : i64
^head(%i: i64):
  %more = arith.cmpi slt, %i, %n : i64
  cf.cond_br %more, ^body, ^exit
^body:
  %one = arith.constant 1 : i64
  %next = arith.addi %i, %one : i64
  cf.br ^head(%next : i64)
^dead:
  func.return %next : i64
}

// -----

// A value of a region is not visible outside it, even where the region
// gives the name a meaning further down (xDSL's scf.while verifier raised an
// IndexError here).
func.func @escape(%x: f64) -> f64 {
  %t = arith.constant true
  // expected-error@+1 {{[dominance] 'arith.negf' uses %a, which is not defined in its region or a region around it}}
  %b = arith.negf %a : f64
  %r = scf.while (%a = %x) : (f64) -> f64 {
    scf.condition(%t) %b : f64
  } do {
    scf.yield %b : f64
  }
  func.return %r : f64
}

// -----

// Each block of a region with several blocks ends with a terminator.
func.func @open_block(%n: i64) -> i64 {
  cf.br ^next
^next:
  // expected-error@+1 {{[terminator] block 1 of the region of 'func.func' does not end with a terminator}}
  %x = arith.addi %n, %n : i64
}
