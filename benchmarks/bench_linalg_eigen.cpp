// linalg_bench, Eigen over adx::var<double> scalars: `eigen_var`, with adx/eigen.hpp's
// Eigen::NumTraits for var. The problems written with Eigen's matrices and its LLT and
// PartialPivLU, as an Eigen user writes them, over var elements: every scalar operation of the
// factorizations and solves is a tape statement (what Eigen code over scalar AD types costs, where
// no rule works on whole matrices). n = 8 and 64 only: the statements grow as n^3, and at 256 one
// gradient takes 40 to 80 ms (40 to 60 times the hand gradient) and the process 430 MB.
#include <Eigen/Dense>
#include <adx/adx.hpp>
#include <adx/eigen.hpp>
#include <memory>

#include "linalg_problems.hpp"
#include "tensor_harness.hpp"

namespace adx_bench::tensor_suite {
namespace {

using V = adx::var<double>;                                  ///< the scalar
using M = Eigen::Matrix<V, Eigen::Dynamic, Eigen::Dynamic>;  ///< a matrix of vars (column-major)
using Vec = Eigen::Matrix<V, Eigen::Dynamic, 1>;             ///< a vector of vars
using Md = Eigen::MatrixXd;                                  ///< a matrix of numbers
using Vd = Eigen::VectorXd;                                  ///< a vector of numbers

/// The largest size run (the recordings grow as n^3).
constexpr std::size_t largest = 64;

/// A row-major block of v as an Eigen matrix of numbers.
Md numbers(std::vector<double> const& v, std::size_t offset, std::size_t rows, std::size_t cols) {
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  return Eigen::Map<RowMajor const>(v.data() + offset, static_cast<Eigen::Index>(rows),
                                    static_cast<Eigen::Index>(cols));
}
/// m's adjoints into g, row-major; returns the end.
template <class Derived>
double* read_adjoints(Eigen::MatrixBase<Derived> const& m, double* g) {
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) *g++ = m(i, j).adjoint();
  return g;
}

/// mvn with Eigen over var.
struct mvn_eigen {
  mvn_problem const& p;  ///< the instance
  Md Sigma0;             ///< the point's Sigma
  Vd mu0, z;             ///< the point's mu, the data
  /// The matrices of q's point and data.
  explicit mvn_eigen(mvn_problem const& q)
      : p(q), Sigma0(numbers(q.x0, 0, q.N, q.N)), mu0(numbers(q.x0, q.N * q.N, q.N, 1)), z(numbers(q.z, 0, q.N, 1)) {}
  /// The density and its gradient into g. LLT reads the lower triangle: the function of
  /// sym(Sigma), made explicit, gives the symmetric gradient that the other implementations give.
  double gradient(double* g) const {
    adx::tape_scope<V> scope;
    M const Sigma = Sigma0.cast<V>();  // independent variables
    Vec const mu = mu0.cast<V>();
    M const S = 0.5 * (Sigma + Sigma.transpose());
    Eigen::LLT<M> const llt(S);
    Vec const r = llt.matrixL().solve(Vec(z - mu));
    V const f = -0.5 * r.squaredNorm() - llt.matrixLLT().diagonal().array().log().sum() - half_log_2pi(p.N);
    adx::backward(f);
    read_adjoints(mu, read_adjoints(Sigma, g));
    return f.value();
  }
};

/// gp with Eigen over var.
struct gp_eigen {
  gp_problem const& p;  ///< the instance
  Md D;                 ///< the squared distances
  Vd y0;                ///< the point's y
  /// The matrices of q's data and y.
  explicit gp_eigen(gp_problem const& q) : p(q), D(numbers(q.D, 0, q.N, q.N)), y0(numbers(q.x0, 3, q.N, 1)) {}
  /// nlml and its gradient into g.
  double gradient(double* g) const {
    adx::tape_scope<V> scope;
    V const ell = p.x0[0], sf2 = p.x0[1], sn2 = p.x0[2];
    Vec const y = y0.cast<V>();
    V const c = -0.5 / (ell * ell);
    M K = (sf2 * (D * c).array().exp()).matrix();
    K.diagonal().array() += sn2;
    Eigen::LLT<M> const llt(K);
    Vec const alpha = llt.solve(y);
    V const f = 0.5 * y.dot(alpha) + llt.matrixLLT().diagonal().array().log().sum() + half_log_2pi(p.N);
    adx::backward(f);
    g[0] = ell.adjoint(), g[1] = sf2.adjoint(), g[2] = sn2.adjoint();
    read_adjoints(y, g + 3);
    return f.value();
  }
};

/// solve_logdet with Eigen over var.
struct solve_logdet_eigen {
  solve_logdet_problem const& p;  ///< the instance
  Md A0, B0, W;                   ///< the point and the data
  /// The matrices of q's point and data.
  explicit solve_logdet_eigen(solve_logdet_problem const& q)
      : p(q), A0(numbers(q.x0, 0, q.N, q.N)), B0(numbers(q.x0, q.N * q.N, q.N, q.K)), W(numbers(q.W, 0, q.N, q.K)) {}
  /// f and its gradient into g; log det A from the LU's diagonal, as an Eigen user writes it.
  double gradient(double* g) const {
    adx::tape_scope<V> scope;
    M const A = A0.cast<V>(), B = B0.cast<V>();
    Eigen::PartialPivLU<M> const lu(A);
    M const X = lu.solve(B);
    V const f = (X.array() * W.array()).sum() + lu.matrixLU().diagonal().array().abs().log().sum();
    adx::backward(f);
    read_adjoints(B, read_adjoints(A, g));
    return f.value();
  }
};

}  // namespace

/// eigen_var for every problem at n = 8 and 64.
void register_linalg_eigen() {
  static std::vector<std::unique_ptr<mvn_eigen>> mvns;
  static std::vector<std::unique_ptr<gp_eigen>> gps;
  static std::vector<std::unique_ptr<solve_logdet_eigen>> sls;
  for (auto const& p : mvn_problems())
    if (p.N <= largest) {
      mvns.push_back(std::make_unique<mvn_eigen>(p));
      add_object_gradient(p.name, "eigen_var", p.n(), *mvns.back());
    }
  for (auto const& p : gp_problems())
    if (p.N <= largest) {
      gps.push_back(std::make_unique<gp_eigen>(p));
      add_object_gradient(p.name, "eigen_var", p.n(), *gps.back());
    }
  for (auto const& p : solve_logdet_problems())
    if (p.N <= largest) {
      sls.push_back(std::make_unique<solve_logdet_eigen>(p));
      add_object_gradient(p.name, "eigen_var", p.n(), *sls.back());
    }
}

}  // namespace adx_bench::tensor_suite
