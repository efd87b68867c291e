//! Test harness for blocks: instantiate by kind, set parameters, configure,
//! initialise with a sample period, step with given inputs and collect the
//! outputs. Every step is checked not to allocate.

use morc_test_support::alloc::{control_allocation, this_thread_allocations as allocations, CountingAllocator};

use crate::component::{Component, InitContext, Step, StepContext};
use crate::data::AssemblyData;
use crate::registry::create;
use crate::value::Value;

// Counts allocations per thread, so the harness can prove that `step` is allocation-free.
#[global_allocator]
static COUNTING_ALLOCATOR: CountingAllocator = CountingAllocator;

/// A parameter value written the short way in tests: `("k", &2.0)`,
/// `("signs", &"+-")`, `("k", &[1.0, 2.0])`.
pub(crate) trait ToValue {
    fn to_value(&self) -> Value;
}
impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}
impl ToValue for i64 {
    fn to_value(&self) -> Value {
        Value::Integer(*self)
    }
}
impl ToValue for &str {
    fn to_value(&self) -> Value {
        Value::String(self.to_string())
    }
}
impl<const N: usize> ToValue for [f64; N] {
    fn to_value(&self) -> Value {
        Value::Vector(self.to_vec())
    }
}

pub(crate) type Params<'a> = [(&'a str, &'a dyn ToValue)];

/// One block instance, configured and initialised, ready to step.
pub(crate) struct Harness {
    pub block: Box<dyn Component>,
    /// Outputs as written by `initialize` until the first step, then by the last step.
    pub outputs: Vec<Value>,
    /// Stand-ins for unconnected inputs (zeros of the port type).
    unconnected: Vec<Value>,
    period: f64,
    steps: u64,
}

impl Harness {
    /// Instantiates `kind`, sets `params`, configures and initialises it with
    /// sample period `period`; the first failing stage's error is returned.
    pub fn new(kind: &str, params: &Params, period: f64) -> Result<Harness, String> {
        let mut block = create(kind).ok_or_else(|| format!("no kind {kind}"))?;
        for (name, value) in params {
            block.set_parameter(name, &value.to_value())?;
        }
        block.configure()?;
        let info = block.info();
        let mut outputs: Vec<Value> = info.outputs.iter().map(|p| Value::zero(p.ty)).collect();
        let unconnected = info.inputs.iter().map(|p| Value::zero(p.ty)).collect();
        let data = AssemblyData::new();
        let ctx = InitContext { name: "test", period, base_period: period, data: &data, thread: &Default::default(), base_latency: 0 };
        block.initialize(&ctx, &mut outputs)?;
        Ok(Harness { block, outputs, unconnected, period, steps: 0 })
    }

    /// Steps once. Inputs not given (a shorter slice) are unconnected: zero.
    /// Panics if the block allocates, changes an output's type or does not continue.
    pub fn step(&mut self, inputs: &[Value]) -> &[Value] {
        let info = self.block.info();
        for (i, port) in info.inputs.iter().enumerate() {
            if let Some(v) = inputs.get(i) {
                assert_eq!(v.ty(), port.ty, "{}: input {} given as {}", info.kind, port.name, v.ty());
            }
        }
        let n = inputs.len().min(self.unconnected.len());
        self.unconnected[..n].clone_from_slice(&inputs[..n]);
        let ctx = StepContext { step: self.steps, time: self.steps as f64 * self.period, period: self.period };
        // With a positive control: the one allocation it makes must be counted, or the count proves nothing.
        let before = allocations();
        control_allocation();
        let result = self.block.step(&ctx, &self.unconnected, &mut self.outputs);
        let counted = allocations() - before;
        assert!(counted >= 1, "the allocation counter missed its control allocation: it is not counting this thread");
        assert_eq!(counted - 1, 0, "{} allocated in step", self.block.info().kind);
        assert_eq!(result, Step::Continue);
        for (v, p) in self.outputs.iter().zip(&self.block.info().outputs) {
            assert_eq!(v.ty(), p.ty, "{}: output {} changed type", self.block.info().kind, p.name);
        }
        self.unconnected[..n].iter_mut().zip(&self.block.info().inputs).for_each(|(v, p)| *v = Value::zero(p.ty));
        self.steps += 1;
        &self.outputs
    }
}

/// Runs `kind` over a sequence of input sets; returns the outputs of every step.
pub(crate) fn simulate(kind: &str, params: &Params, period: f64, inputs: &[Vec<Value>]) -> Vec<Vec<Value>> {
    let mut h = Harness::new(kind, params, period).unwrap_or_else(|e| panic!("{kind}: {e}"));
    inputs.iter().map(|u| h.step(u).to_vec()).collect()
}

/// A scalar single-input block's first output for the input sequence `u`.
pub(crate) fn siso(kind: &str, params: &Params, period: f64, u: &[f64]) -> Vec<f64> {
    let mut h = Harness::new(kind, params, period).unwrap_or_else(|e| panic!("{kind}: {e}"));
    u.iter().map(|&u| h.step(&[Value::Real(u)])[0].real()).collect()
}

/// A scalar source's output over `steps` steps.
pub(crate) fn source(kind: &str, params: &Params, period: f64, steps: usize) -> Vec<f64> {
    let mut h = Harness::new(kind, params, period).unwrap_or_else(|e| panic!("{kind}: {e}"));
    (0..steps).map(|_| h.step(&[])[0].real()).collect()
}

/// The error a block reports for `params` (from set_parameter, configure or initialize).
pub(crate) fn error(kind: &str, params: &Params, period: f64) -> String {
    match Harness::new(kind, params, period) {
        Ok(_) => panic!("{kind} accepted {:?}", params.iter().map(|(n, v)| (n, v.to_value())).collect::<Vec<_>>()),
        Err(e) => e,
    }
}

/// Asserts |a − b| ≤ tol, with a message naming what is compared.
#[track_caller]
pub(crate) fn assert_close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: {a} vs {b} (tolerance {tol})");
}
