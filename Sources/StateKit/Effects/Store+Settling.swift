/// A store whose effects a virtual clock can wait for, whatever its feature: the server's
/// `clock/advance` settles every open store before moving time, so an effect a dispatch just
/// started is already asleep on the clock (not on its way to it) when time moves.
///
/// ```swift
/// for case let store as any EffectSettling in openStores { await store.settleEffects() }
/// await clock.advance(by: .milliseconds(300))
/// ```
@StateActor
public protocol EffectSettling: AnyObject {
  /// Waits until every effect of the store is finished or asleep on a ``VirtualClock``.
  func settleEffects() async
}

extension Store: EffectSettling {}
