/// A small, fast, seeded pseudo-random generator (SplitMix64, Steele et al. 2014).
///
/// The simulated backend draws every failure from one of these so that a run is reproducible
/// from its `--seed`: the same seed and the same sequence of requests give the same failures.
///
/// ```swift
/// var random = SplitMix64(seed: 42)
/// random.nextDouble()  // the same value on every machine
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator whose sequence is fixed by `seed`.
  public init(seed: UInt64) {
    state = seed
  }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A value in `0..<1` with 53 bits of precision.
  public mutating func nextDouble() -> Double {
    Double(next() >> 11) * 0x1.0p-53
  }
}
