//! The simulated arm with elastic drive trains (Spong's flexible-joint model): on a joint whose
//! gear has a stiffness, the motor (the drive train's `armature`, its friction on the motor's
//! velocity) and the link are two bodies coupled by a torsional spring and damper,
//!
//! ```text
//! M(q)·q̈ + n(q, q̇) = τ_s                      (link side; M without the elastic joints' rotor inertia)
//! B·θ̈ + f(θ̇) + τ_s = τ_m                      (motor side, seen at the joint)
//! τ_s = K·(θ − q) + D·(θ̇ − q̇)
//! ```
//!
//! θ the motor's position divided by the gear ratio, τ_m the drive's torque. A rigid joint of the
//! same arm keeps θ = q, its rotor inertia in M and its friction on q̇. The drives measure and
//! command the motors (as their encoders sit on the motors); the links are what a tracker sees.
//!
//! The spring makes the arm stiff: its fastest mode, ω² = K·(1/B + (M⁻¹)ᵢᵢ) (and the damper's
//! rate D·(1/B + (M⁻¹)ᵢᵢ)), sets the integration step. Each base period takes `substeps` steps of
//! semi-implicit Euler so that ω·h ≤ [`MAX_OMEGA_STEP`] at the start position (stable up to 2,
//! accurate in phase to (ω·h)²/24); the mass matrix, its factors and the Coriolis and gravity
//! torques n are computed once per base period (they change with the arm's pose, slowly against
//! the spring), so a substep costs one triangular solve. Nothing allocates after construction.

use morc_model::{Data, DriveTrain, Model};
use nalgebra::DMatrix;

/// The largest ω·h a substep takes (h the substep, ω the fastest mode at the start position).
pub const MAX_OMEGA_STEP: f64 = 0.2;

/// The link side and the motors of an arm with elastic drive trains.
pub struct ElasticPlant {
    /// The drive trains, per joint.
    drives: Vec<DriveTrain>,
    /// Link positions (rad; m for prismatic joints): what a tracker sees.
    pub q: Vec<f64>,
    /// Link velocities (rad/s; m/s).
    pub qd: Vec<f64>,
    /// Integration steps per base period.
    pub substeps: u32,
    /// The base period (s).
    period: f64,
    /// The link-side mass matrix, factored in place, and its pivots.
    mass: DMatrix<f64>,
    pivots: Vec<usize>,
    /// Coriolis, centrifugal and gravity torques of the links (per base period).
    bias: Vec<f64>,
    /// Scratch: the torques on the links, then their accelerations; the motors' accelerations.
    link: Vec<f64>,
    motor: Vec<f64>,
}

impl ElasticPlant {
    /// The plant of `model` (whose drive trains say which joints are elastic) with the motors at
    /// `theta0` and the links where the springs hold them against gravity there; `None` when no
    /// joint is elastic. Errors name the joint whose elastic drive has no rotor inertia.
    pub fn new(model: &Model, data: &mut Data, theta0: &[f64], period: f64, joint_names: &[String]) -> Result<Option<ElasticPlant>, String> {
        let drives: Vec<DriveTrain> = model.drive_trains().to_vec();
        if !drives.iter().any(DriveTrain::is_elastic) {
            return Ok(None);
        }
        if let Some(i) = drives.iter().position(|d| d.is_elastic() && d.armature <= 0.0) {
            return Err(format!("joint {}: an elastic drive train needs the motor's inertia (drive.armature > 0, kg·m² at the joint)", joint_names[i]));
        }
        if let Some(i) = drives.iter().position(|d| d.damping < 0.0 || !d.stiffness.is_finite()) {
            return Err(format!("joint {}: drive stiffness and damping must be finite and ≥ 0", joint_names[i]));
        }
        let n = theta0.len();
        let mut plant = ElasticPlant {
            drives,
            q: theta0.to_vec(),
            qd: vec![0.0; n],
            substeps: 1,
            period,
            mass: DMatrix::zeros(n, n),
            pivots: vec![0; n],
            bias: vec![0.0; n],
            link: vec![0.0; n],
            motor: vec![0.0; n],
        };
        // The links sag from the motors by the springs' static deflection g(q)/K (a few
        // iterations: g depends on q, barely).
        for _ in 0..5 {
            let g = morc_model::gravity(model, data, &plant.q);
            for i in 0..n {
                let d = &plant.drives[i];
                plant.q[i] = if d.is_elastic() { theta0[i] - g[i] / d.stiffness } else { theta0[i] };
            }
        }
        // The fastest mode at the start: ω² = K·(1/B + (M⁻¹)ᵢᵢ), and the damper's rate.
        plant.factor_mass(model, data)?;
        let mut fastest: f64 = 0.0;
        for i in 0..n {
            let d = plant.drives[i];
            if !d.is_elastic() {
                continue;
            }
            plant.link.fill(0.0);
            plant.link[i] = 1.0;
            morc_model::lu_solve(&plant.mass, &plant.pivots, &mut plant.link);
            let compliance = 1.0 / d.armature + plant.link[i];
            fastest = fastest.max((d.stiffness * compliance).sqrt()).max(d.damping * compliance);
        }
        plant.substeps = ((period * fastest / MAX_OMEGA_STEP).ceil() as u32).max(1);
        Ok(Some(plant))
    }

    /// Factors the link-side mass matrix at the links' position: the rigid one less the elastic
    /// joints' rotor inertia, which moves with the motor.
    fn factor_mass(&mut self, model: &Model, data: &mut Data) -> Result<(), String> {
        self.mass.copy_from(morc_model::crba(model, data, &self.q));
        for (i, d) in self.drives.iter().enumerate() {
            if d.is_elastic() {
                self.mass[(i, i)] -= d.armature;
            }
        }
        morc_model::lu_factor(&mut self.mass, &mut self.pivots).map_err(|j| format!("the links' mass matrix is singular at joint index {j}"))
    }

    /// One base period: the drives' torques `tau` act on the motors (θ, θ̇: the drives' measured
    /// side, updated in place) and through the springs on the links.
    pub fn step(&mut self, model: &Model, data: &mut Data, theta: &mut [f64], theta_d: &mut [f64], tau: &[f64]) -> Result<(), String> {
        self.factor_mass(model, data)?;
        self.bias.copy_from_slice(morc_model::nle(model, data, &self.q, &self.qd).as_slice());
        let h = self.period / self.substeps as f64;
        for _ in 0..self.substeps {
            for i in 0..self.q.len() {
                let d = &self.drives[i];
                if d.is_elastic() {
                    let spring = d.stiffness * (theta[i] - self.q[i]) + d.damping * (theta_d[i] - self.qd[i]);
                    self.motor[i] = (tau[i] - d.friction(theta_d[i]) - spring) / d.armature;
                    self.link[i] = spring - self.bias[i];
                } else {
                    self.link[i] = tau[i] - d.friction(self.qd[i]) - self.bias[i];
                }
            }
            morc_model::lu_solve(&self.mass, &self.pivots, &mut self.link);
            for i in 0..self.q.len() {
                self.qd[i] += self.link[i] * h;
                self.q[i] += self.qd[i] * h;
                if self.drives[i].is_elastic() {
                    theta_d[i] += self.motor[i] * h;
                    theta[i] += theta_d[i] * h;
                } else {
                    theta_d[i] = self.qd[i];
                    theta[i] = self.q[i];
                }
            }
        }
        if let Some(i) = self.q.iter().chain(&self.qd).chain(theta.iter()).position(|x| !x.is_finite()) {
            return Err(format!("the elastic arm's state stopped being finite (value {i})"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disc of inertia `inertia` (kg·m²) turning about the vertical on one revolute joint.
    fn disc(inertia: f64, drive: DriveTrain) -> Model {
        let urdf = format!(
            r#"<robot name="disc"><link name="base"/><link name="disc"><inertial><mass value="1"/><origin xyz="0 0 0"/>
            <inertia ixx="1" iyy="1" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial></link>
            <joint name="j" type="revolute"><parent link="base"/><child link="disc"/><axis xyz="0 0 1"/>
            <limit lower="-3" upper="3" velocity="1" effort="100"/></joint></robot>"#
        );
        let mut model = morc_model::parse_urdf(&urdf, "test").unwrap();
        model.set_drive_train(1, drive).unwrap();
        model
    }

    /// Motor and link twisted apart and let go, no torque, no friction: they swing against each
    /// other at ω = √(K·(1/B + 1/I)), and the momentum B·θ̇ + I·q̇ stays 0.
    #[test]
    fn a_twisted_gear_swings_at_the_two_mass_frequency() {
        let (k, b, inertia) = (2.0e4, 0.5, 2.0);
        let model = disc(inertia, DriveTrain { armature: b, stiffness: k, ..Default::default() });
        let mut data = Data::new(&model);
        let period = 1e-3;
        let mut plant = ElasticPlant::new(&model, &mut data, &[0.0], period, &["j".into()]).unwrap().unwrap();
        let omega = (k * (1.0 / b + 1.0 / inertia)).sqrt();
        assert_eq!(plant.substeps, (period * omega / MAX_OMEGA_STEP).ceil() as u32, "ω = {omega}");
        let (mut theta, mut theta_d) = ([0.01], [0.0]);
        let mut crossings = Vec::new();
        let mut last = theta[0] - plant.q[0];
        for k in 0..2000 {
            plant.step(&model, &mut data, &mut theta, &mut theta_d, &[0.0]).unwrap();
            let twist = theta[0] - plant.q[0];
            if last > 0.0 && twist <= 0.0 {
                crossings.push((k + 1) as f64 * period);
            }
            last = twist;
            assert!((b * theta_d[0] + inertia * plant.qd[0]).abs() < 1e-9, "momentum");
        }
        let periods = (crossings.last().unwrap() - crossings[0]) / (crossings.len() - 1) as f64;
        let expected = std::f64::consts::TAU / omega;
        assert!((periods - expected).abs() < 0.01 * expected, "swings every {periods} s, expected {expected} s");
    }

    /// A rigid drive train leaves the joint one body: no plant.
    #[test]
    fn rigid_drives_need_no_plant_and_an_elastic_one_needs_a_motor_inertia() {
        let rigid = disc(2.0, DriveTrain { armature: 0.5, ..Default::default() });
        assert!(ElasticPlant::new(&rigid, &mut Data::new(&rigid), &[0.0], 1e-3, &["j".into()]).unwrap().is_none());
        let massless = disc(2.0, DriveTrain { stiffness: 1e4, ..Default::default() });
        let e = ElasticPlant::new(&massless, &mut Data::new(&massless), &[0.0], 1e-3, &["A1".into()]).err().unwrap();
        assert!(e.contains("joint A1") && e.contains("armature"), "{e}");
    }
}
