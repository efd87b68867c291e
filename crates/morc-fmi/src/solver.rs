//! Model exchange: morc's fixed-step solver over an FMU's continuous states.
//! One sample period [t, t + h] is `substeps` explicit Euler or classic RK4
//! steps with the inputs held (as set before the period); events reported by
//! fmiCompletedIntegratorStep are handled at the end of the sub-step that
//! reports them (no event location: fixed steps are what real time allows).

use super::instance::Instance;
use super::FmiError;

/// The integration method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Euler,
    Rk4,
}

impl Method {
    pub fn parse(name: &str) -> Option<Method> {
        match name {
            "euler" => Some(Method::Euler),
            "rk4" => Some(Method::Rk4),
            _ => None,
        }
    }
}

/// The continuous state and scratch space, allocated once.
pub struct Solver {
    method: Method,
    substeps: usize,
    x: Vec<f64>,
    /// Stage state and the four slopes.
    stage: Vec<f64>,
    k: [Vec<f64>; 4],
}

impl Solver {
    /// Reads the initial state (the FMU is in continuous-time mode).
    pub fn new(instance: &mut dyn Instance, states: usize, method: Method, substeps: usize) -> Result<Solver, FmiError> {
        let mut x = vec![0.0; states];
        if states > 0 {
            instance.get_continuous_states(&mut x)?;
        }
        let z = || vec![0.0; states];
        Ok(Solver { method, substeps: substeps.max(1), x, stage: z(), k: [z(), z(), z(), z()] })
    }

    /// Integrates over [t0, t0 + h]; true when the FMU asks to end the simulation.
    pub fn advance(&mut self, fmu: &mut dyn Instance, t0: f64, h: f64) -> Result<bool, FmiError> {
        let n = self.x.len();
        let dt = h / self.substeps as f64;
        for j in 0..self.substeps {
            let t = t0 + j as f64 * dt;
            if n > 0 {
                let Solver { method, x, stage, k, .. } = self;
                fmu.set_time(t)?;
                fmu.set_continuous_states(x)?;
                fmu.get_derivatives(&mut k[0])?;
                match method {
                    Method::Euler => x.iter_mut().zip(&k[0]).for_each(|(x, d)| *x += dt * d),
                    Method::Rk4 => {
                        // Stages at t + dt/2, t + dt/2, t + dt, each from the previous slope.
                        for (s, fraction) in [(1, 0.5), (2, 0.5), (3, 1.0)] {
                            for i in 0..n {
                                stage[i] = x[i] + fraction * dt * k[s - 1][i];
                            }
                            fmu.set_time(t + fraction * dt)?;
                            fmu.set_continuous_states(stage)?;
                            fmu.get_derivatives(&mut k[s])?;
                        }
                        for i in 0..n {
                            x[i] += dt / 6.0 * (k[0][i] + 2.0 * k[1][i] + 2.0 * k[2][i] + k[3][i]);
                        }
                    }
                }
            }
            fmu.set_time(t0 + (j + 1) as f64 * dt)?;
            if n > 0 {
                fmu.set_continuous_states(&self.x)?;
            }
            let (event, terminate) = fmu.completed_integrator_step()?;
            if terminate {
                return Ok(true);
            }
            if event {
                fmu.enter_event_mode()?;
                if fmu.settle_discrete_states()? {
                    return Ok(true);
                }
                fmu.enter_continuous_time_mode()?;
                if n > 0 {
                    fmu.get_continuous_states(&mut self.x)?;
                }
            }
        }
        Ok(false)
    }
}
