#if canImport(Testing)

  import JSON
  @_spi(Testing) import StateKit
  import Testing

  extension TestStore {
    /// Sends a wire action as a client would (the public check, decoding and validation, then
    /// the reduce) and checks the state it produced like ``send(_:assert:sourceLocation:)``.
    public func send(
      wire: JSON, assert update: ((inout F.State) throws -> Void)? = nil,
      sourceLocation: SourceLocation = #_sourceLocation
    ) async {
      sentState = nil
      currentLocation = sourceLocation
      do throws(ActionError) {
        _ = try store.send(wire: wire, cause: nil)
      } catch {
        fail(
          "send(wire: \(render(wire))) was refused (\(error.code)): \(error)",
          sourceLocation: sourceLocation)
        return
      }
      await store.settleEffects()
      guard let after = sentState else {
        fail("\(render(wire)) was not reduced: the store is closed", sourceLocation: sourceLocation)
        return
      }
      check("send(wire: \(render(wire)))", after: after, update, sourceLocation)
    }

    /// Sends a wire action as a client would and expects it refused with `code` (-32003: unknown
    /// or internal; -32602: a field that does not decode or that validation refused) and, when
    /// given, `pointer` (relative to the action: `/quantity`). The state must not change.
    public func send(
      wire: JSON, refusedWith code: Int, pointer: String? = nil,
      sourceLocation: SourceLocation = #_sourceLocation
    ) {
      let before = store.state
      do throws(ActionError) {
        _ = try store.send(wire: wire, cause: nil)
        fail(
          "Expected \(render(wire)) to be refused with \(code), but it was reduced",
          sourceLocation: sourceLocation)
      } catch {
        if error.code != code || (pointer != nil && error.pointer != pointer) {
          fail(
            "Expected \(render(wire)) refused with \(code)"
              + (pointer.map { " at \($0)" } ?? "") + ", got \(error.code)"
              + (error.pointer.map { " at \($0)" } ?? "") + ": \(error)",
            sourceLocation: sourceLocation)
        }
        if store.state != before {
          fail("A refused action changed the state", sourceLocation: sourceLocation)
        }
      }
    }
  }

  extension TestStore where F.Event: Equatable {
    /// Checks that the next event emitted is `expected`, waiting for effects that may still
    /// emit it (until none can progress). Events are compared as typed values, decoded back
    /// from the wire form a client receives.
    public func receive(event expected: F.Event, sourceLocation: SourceLocation = #_sourceLocation)
      async
    {
      if events.isEmpty { await settle() }
      guard !events.isEmpty else {
        fail(
          "Expected the event \(expected), but no event was emitted", sourceLocation: sourceLocation
        )
        return
      }
      let wire = events.removeFirst()
      do {
        let got = try WireFormat.decode(F.Event.self, from: wire)
        if got != expected {
          fail("Expected the event \(expected), got \(got)", sourceLocation: sourceLocation)
        }
      } catch {
        fail(
          "The event \(render(wire)) does not decode back: \(error)", sourceLocation: sourceLocation
        )
      }
    }
  }

#endif
