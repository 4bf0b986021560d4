import Features
import StateKit
import Testing

/// The reference features' action and event names, read from their types, are the ones the
/// hand-kept lists advertised before (`features/list` did not change), and none is ambiguous.
@Suite struct FeatureCaseNameTests {
  @Test func theNamesAreTheOnesClientsKnow() {
    #expect(
      CartFeature.caseNames.publicActions == [
        "add", "setQuantity", "remove", "applyCoupon", "clearCoupon",
      ])
    #expect(CartFeature.caseNames.internalActions == ["couponApplied", "couponFailed"])
    #expect(CartFeature.caseNames.events == ["toast"])
    #expect(
      ProfileFeature.caseNames.publicActions == ["edit", "save", "cancelSave", "dismissError"])
    #expect(ProfileFeature.caseNames.events == ["dismiss"])
    #expect(
      NotesFeature.caseNames.publicActions == [
        "add", "edit", "delete", "sync", "resolveConflict",
      ])
    #expect(NotesFeature.caseNames.events == [])
    #expect(
      UsersFeature.caseNames.publicActions == [
        "load", "refresh", "retry", "search", "select", "deselect", "delete", "rename",
        "resolveConflict",
      ])
    #expect(UsersFeature.caseNames.internalActions.contains("loaded"))
    #expect(
      BackendFeature.caseNames.publicActions == [
        "setOnline", "setLatency", "setFailRate", "setFallbackOnline", "setFallbackFailRate",
        "remoteEdit", "remoteUserEdit",
      ])
    #expect(
      NavigationFeature.caseNames.publicActions == [
        "push", "pop", "popToRoot", "openURL",
      ])
    #expect(NavigationFeature.caseNames.events == ["toast"])
  }

  @Test func noReferenceFeatureHasACaseNameProblem() {
    #expect(CounterFeature.caseNameProblems == [])
    #expect(CartFeature.caseNameProblems == [])
    #expect(ProfileFeature.caseNameProblems == [])
    #expect(NotesFeature.caseNameProblems == [])
    #expect(UsersFeature.caseNameProblems == [])
    #expect(BackendFeature.caseNameProblems == [])
    #expect(NavigationFeature.caseNameProblems == [])
  }
}
