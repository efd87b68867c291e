//! Cartesian paths of the tool: a straight line (LIN) or a circular arc through an auxiliary
//! point (CIRC), with the orientation interpolated from start to end by slerp (the shortest
//! rotation), all as functions of one parameter u ∈ [0, 1].

use nalgebra::{Matrix3, Rotation3, UnitQuaternion, Vector3};

use morc_model::Se3;

/// The geometry of the position part.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Geometry {
    Line {
        from: Vector3<f64>,
        to: Vector3<f64>,
    },
    /// p(u) = centre + radius·(cos(u·angle)·e1 + sin(u·angle)·e2).
    Arc {
        centre: Vector3<f64>,
        radius: f64,
        e1: Vector3<f64>,
        e2: Vector3<f64>,
        angle: f64,
    },
}

/// A tool path: pose(u) for u ∈ [0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CartesianPath {
    geometry: Geometry,
    start_rotation: UnitQuaternion<f64>,
    end_rotation: UnitQuaternion<f64>,
}

fn quaternion(r: &Matrix3<f64>) -> UnitQuaternion<f64> {
    UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(*r))
}

impl CartesianPath {
    /// A straight line from `start` to `end`.
    pub fn line(start: &Se3, end: &Se3) -> CartesianPath {
        CartesianPath {
            geometry: Geometry::Line { from: start.translation, to: end.translation },
            start_rotation: quaternion(&start.rotation),
            end_rotation: quaternion(&end.rotation),
        }
    }

    /// The arc from `start` through the point `via` to `end`; an error when the three points
    /// are (nearly) on one line or two coincide.
    pub fn arc(start: &Se3, via: &Vector3<f64>, end: &Se3) -> Result<CartesianPath, String> {
        let (p0, p2) = (start.translation, end.translation);
        let (a, b) = (p0 - p2, via - p2);
        let normal = a.cross(&b);
        let scale = a.norm().max(b.norm()).max(1e-9);
        if normal.norm() < 1e-6 * scale * scale {
            return Err(format!("the auxiliary point {:.1?} mm is on the line from start to target (or two points coincide): no circle passes through them; use lin", (via * 1e3).as_slice()));
        }
        // Circumcentre of the triangle (p0, via, p2).
        let centre = p2 + (b * a.norm_squared() - a * b.norm_squared()).cross(&normal) / (2.0 * normal.norm_squared());
        let radius = (p0 - centre).norm();
        let e1 = (p0 - centre) / radius;
        // Travel direction: from p0 towards via (the triangle's orientation p0 → via → p2).
        let axis = (via - p0).cross(&(p2 - p0)).normalize();
        let e2 = axis.cross(&e1);
        let angle_of = |p: &Vector3<f64>| {
            let d = p - centre;
            d.dot(&e2).atan2(d.dot(&e1)).rem_euclid(std::f64::consts::TAU)
        };
        let angle = angle_of(&p2);
        debug_assert!(angle_of(via) <= angle, "the via point lies between start and end");
        Ok(CartesianPath {
            geometry: Geometry::Arc { centre, radius, e1, e2, angle },
            start_rotation: quaternion(&start.rotation),
            end_rotation: quaternion(&end.rotation),
        })
    }

    /// Length of the position path (m).
    pub fn length(&self) -> f64 {
        match self.geometry {
            Geometry::Line { from, to } => (to - from).norm(),
            Geometry::Arc { radius, angle, .. } => radius * angle,
        }
    }

    /// Angle of the orientation change (rad).
    pub fn rotation_angle(&self) -> f64 {
        self.start_rotation.angle_to(&self.end_rotation)
    }

    /// The pose at u ∈ [0, 1].
    pub fn pose(&self, u: f64) -> Se3 {
        let u = u.clamp(0.0, 1.0);
        let translation = match self.geometry {
            Geometry::Line { from, to } => from + (to - from) * u,
            Geometry::Arc { centre, radius, e1, e2, angle } => {
                let (s, c) = (u * angle).sin_cos();
                centre + (e1 * c + e2 * s) * radius
            }
        };
        let rotation = self.start_rotation.try_slerp(&self.end_rotation, u, 1e-12).unwrap_or(self.start_rotation);
        Se3::new(rotation.to_rotation_matrix().into_inner(), translation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use morc_model::rotation_from_rpy;

    #[test]
    fn line_interpolates_position_and_orientation() {
        let a = Se3::new(Matrix3::identity(), Vector3::new(0.5, 0.0, 0.5));
        let b = Se3::new(rotation_from_rpy(0.0, 0.0, 1.0), Vector3::new(0.5, 0.3, 0.1));
        let path = CartesianPath::line(&a, &b);
        assert!((path.length() - 0.5).abs() < 1e-12);
        assert!((path.rotation_angle() - 1.0).abs() < 1e-12);
        let mid = path.pose(0.5);
        assert!((mid.translation - Vector3::new(0.5, 0.15, 0.3)).norm() < 1e-12);
        assert!((mid.rotation - rotation_from_rpy(0.0, 0.0, 0.5)).norm() < 1e-12);
        assert!((path.pose(1.0).rotation - b.rotation).norm() < 1e-12);
    }

    #[test]
    fn arc_passes_through_its_three_points() {
        let r = Matrix3::identity();
        let start = Se3::new(r, Vector3::new(1.0, 0.0, 0.2));
        let via = Vector3::new(0.0, 1.0, 0.2);
        let end = Se3::new(r, Vector3::new(-1.0, 0.0, 0.2));
        let path = CartesianPath::arc(&start, &via, &end).unwrap();
        assert!((path.length() - std::f64::consts::PI).abs() < 1e-12);
        assert!((path.pose(0.5).translation - via).norm() < 1e-12);
        assert!((path.pose(1.0).translation - end.translation).norm() < 1e-12);
        // The other way round goes through −y.
        let other = CartesianPath::arc(&start, &Vector3::new(0.0, -1.0, 0.2), &end).unwrap();
        assert!((other.pose(0.5).translation - Vector3::new(0.0, -1.0, 0.2)).norm() < 1e-12);
        // A 270° arc.
        let long = CartesianPath::arc(&start, &Vector3::new(-1.0, 0.0, 0.2), &Se3::new(r, Vector3::new(0.0, -1.0, 0.2))).unwrap();
        assert!((long.length() - 1.5 * std::f64::consts::PI).abs() < 1e-12);
        let colinear = CartesianPath::arc(&start, &Vector3::new(0.0, 0.0, 0.2), &end);
        assert!(colinear.unwrap_err().contains("use lin"));
    }
}
