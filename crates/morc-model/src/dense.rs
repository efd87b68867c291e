//! Dense decompositions for the real-time path, allocating nothing once sized: LU with partial
//! pivoting and the damped least-squares pseudo-inverse. One implementation, used by Lua's
//! `A:pinv_to`/`A:solve_to` and by the native controllers, so both compute the same numbers
//! operation for operation.

use nalgebra::DMatrix;

/// LU factorisation with partial pivoting, in place; `Err(column)` when a pivot is (nearly) zero.
pub fn lu_factor(a: &mut DMatrix<f64>, pivots: &mut [usize]) -> Result<(), usize> {
    let n = a.nrows();
    let scale = a.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    let tiny = f64::EPSILON * scale * n as f64;
    for k in 0..n {
        let (mut p, mut best) = (k, a[(k, k)].abs());
        for i in k + 1..n {
            if a[(i, k)].abs() > best {
                (p, best) = (i, a[(i, k)].abs());
            }
        }
        // NaN fails the comparison too, so a NaN matrix counts as singular.
        if best.is_nan() || best <= tiny {
            return Err(k);
        }
        pivots[k] = p;
        if p != k {
            a.swap_rows(k, p);
        }
        let pivot = a[(k, k)];
        for i in k + 1..n {
            let l = a[(i, k)] / pivot;
            a[(i, k)] = l;
            for j in k + 1..n {
                let akj = a[(k, j)];
                a[(i, j)] -= l * akj;
            }
        }
    }
    Ok(())
}

/// Solves `A x = b` in place in `b` from [`lu_factor`]'s result.
pub fn lu_solve(lu: &DMatrix<f64>, pivots: &[usize], b: &mut [f64]) {
    let n = lu.nrows();
    for (k, &p) in pivots.iter().enumerate() {
        b.swap(k, p);
    }
    for i in 0..n {
        let mut s = b[i];
        for j in 0..i {
            s -= lu[(i, j)] * b[j];
        }
        b[i] = s;
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for j in i + 1..n {
            s -= lu[(i, j)] * b[j];
        }
        b[i] = s / lu[(i, i)];
    }
}

/// The damped pseudo-inverse `B = Aᵀ(AAᵀ + λ²I)⁻¹` (or `(AᵀA + λ²I)⁻¹Aᵀ` when A is tall) with
/// its workspace: the normal matrix summed in column order, LU with partial pivoting, then one
/// solve per column. Allocates only when the shape changes.
#[derive(Clone, Debug, Default)]
pub struct DampedPinv {
    lu: DMatrix<f64>,
    pivots: Vec<usize>,
    x: DMatrix<f64>,
}

/// Why a pseudo-inverse could not be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinvError {
    /// `b` is not `a`'s transpose's shape.
    Shape,
    /// The normal matrix (`AAᵀ`, or `AᵀA` for a tall A, plus λ²I) is singular: A is rank
    /// deficient and there is no damping.
    Singular {
        /// A is wider than tall (the normal matrix is `AAᵀ`).
        wide: bool,
    },
}

impl DampedPinv {
    /// A workspace sized for `rows × cols` matrices (resized by [`DampedPinv::compute`] as needed).
    pub fn new(rows: usize, cols: usize) -> Self {
        let mut p = DampedPinv::default();
        p.size(rows, cols);
        p
    }

    fn size(&mut self, rows: usize, cols: usize) {
        let k = rows.min(cols);
        if self.lu.shape() != (k, k) {
            self.lu = DMatrix::zeros(k, k);
            self.pivots = vec![0; k];
        }
        let x = if rows <= cols { (rows, cols) } else { (0, 0) };
        if self.x.shape() != x {
            self.x = DMatrix::zeros(x.0, x.1);
        }
    }

    /// `b = A⁺_λ` (`b` has the shape of `a`'s transpose).
    pub fn compute(&mut self, a: &DMatrix<f64>, b: &mut DMatrix<f64>, damping: f64) -> Result<(), PinvError> {
        let (m, n) = a.shape();
        if b.shape() != (n, m) {
            return Err(PinvError::Shape);
        }
        self.size(m, n);
        let wide = m <= n;
        let k = if wide { m } else { n };
        let g = &mut self.lu;
        for i in 0..k {
            for j in 0..=i {
                let s: f64 = if wide { (0..n).map(|c| a[(i, c)] * a[(j, c)]).sum() } else { (0..m).map(|r| a[(r, i)] * a[(r, j)]).sum() };
                g[(i, j)] = s;
                g[(j, i)] = s;
            }
            g[(i, i)] += damping * damping;
        }
        lu_factor(g, &mut self.pivots).map_err(|_| PinvError::Singular { wide })?;
        if wide {
            // X = G⁻¹ A column by column, then B = Xᵀ (G is symmetric).
            self.x.copy_from(a);
            for mut col in self.x.column_iter_mut() {
                lu_solve(&self.lu, &self.pivots, col.as_mut_slice());
            }
            for i in 0..m {
                for j in 0..n {
                    b[(j, i)] = self.x[(i, j)];
                }
            }
        } else {
            // Column i of B = G⁻¹ (row i of A)ᵀ.
            for i in 0..m {
                let mut col = b.column_mut(i);
                for j in 0..n {
                    col[j] = a[(i, j)];
                }
                lu_solve(&self.lu, &self.pivots, col.as_mut_slice());
            }
        }
        Ok(())
    }
}

/// Indices of the columns of `w` that QR with column pivoting keeps (in pivot order), and each
/// column's |R_ii| relative to the largest (1 for kept ones; for the rest, the norm left when
/// the loop stopped; 0 for a column of rounding noise). Columns are scaled to unit length
/// first, except those below `tolerance` × the longest, which are rounding noise (a parameter
/// that acts on no torque) and would become unit columns of noise.
pub(crate) fn pivoted_rank(w: &DMatrix<f64>, tolerance: f64) -> (Vec<usize>, Vec<f64>) {
    let n = w.ncols();
    let mut rest = w.clone();
    let longest = rest.column_iter().map(|c| c.norm()).fold(0.0, f64::max);
    for mut c in rest.column_iter_mut() {
        let norm = c.norm();
        if norm > tolerance * longest {
            c /= norm;
        } else {
            c.fill(0.0);
        }
    }
    let mut left: Vec<usize> = (0..n).collect();
    let mut kept = Vec::new();
    let mut r = vec![1.0; n];
    let mut largest = 0.0;
    while !left.is_empty() {
        let (at, norm) = left.iter().enumerate().map(|(i, &c)| (i, rest.column(c).norm())).fold((0, -1.0), |a, b| if b.1 > a.1 { b } else { a });
        if largest == 0.0 {
            largest = norm;
        }
        if norm <= tolerance * largest || norm == 0.0 {
            break;
        }
        let col = left.swap_remove(at);
        let q = rest.column(col) / norm;
        for &c in &left {
            let d = q.dot(&rest.column(c));
            rest.column_mut(c).axpy(-d, &q, 1.0);
        }
        kept.push(col);
    }
    for &c in &left {
        r[c] = rest.column(c).norm() / largest.max(f64::MIN_POSITIVE);
    }
    (kept, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damped_pinv_is_the_damped_least_squares_inverse() {
        // B(AAᵀ + λ²I) = Aᵀ (wide) and (AᵀA + λ²I)B = Aᵀ (tall), one workspace for every shape.
        let mut p = DampedPinv::default();
        for (m, n) in [(3, 5), (5, 3), (6, 6)] {
            let a = DMatrix::from_fn(m, n, |i, j| ((i * 7 + j * 3) as f64 * 0.37).sin() + if i == j { 1.0 } else { 0.0 });
            let mut b = DMatrix::zeros(n, m);
            let lambda = 0.1;
            p.compute(&a, &mut b, lambda).unwrap();
            let residual = if m <= n {
                &b * (&a * a.transpose() + DMatrix::identity(m, m) * lambda * lambda) - a.transpose()
            } else {
                (a.transpose() * &a + DMatrix::identity(n, n) * lambda * lambda) * &b - a.transpose()
            };
            assert!(residual.amax() < 1e-12, "{m}×{n}: residual {}", residual.amax());
        }
        let singular = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 4.0]);
        assert_eq!(p.compute(&singular, &mut DMatrix::zeros(2, 2), 0.0), Err(PinvError::Singular { wide: true }));
        assert_eq!(p.compute(&singular, &mut DMatrix::zeros(3, 2), 0.1), Err(PinvError::Shape));
    }

    #[test]
    fn lu_solves_a_permuted_system() {
        let a = DMatrix::from_row_slice(3, 3, &[0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0]);
        let mut lu = a.clone();
        let mut pivots = [0; 3];
        lu_factor(&mut lu, &mut pivots).unwrap();
        let mut x = [1.0, 2.0, 3.0];
        lu_solve(&lu, &pivots, &mut x);
        let r = &a * nalgebra::DVector::from_row_slice(&x) - nalgebra::DVector::from_row_slice(&[1.0, 2.0, 3.0]);
        assert!(r.norm() < 1e-14);
    }
}
