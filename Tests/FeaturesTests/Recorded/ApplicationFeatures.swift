import Features
import StateKit
import StateServer

/// The reference application's features as `stateserver` builds them with its default flags
/// (the default `--seed`, `--latency 50`, `--fail-rate 0`), on `clock`: what the tests that
/// `stateserver replay --emit swift` writes into this folder serve.
func applicationFeatures(clock: ServerClock) -> [FeatureDescriptor] {
  Features.all(backend: Backend(clock: clock), clock: clock)
}
