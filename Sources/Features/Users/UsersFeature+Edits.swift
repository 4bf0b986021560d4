import StateKit

/// Three sources, one state: the server's copies (loads and pushes), the local renames, and
/// the cache (the state itself, persisted). Each user is reconciled by version, never by time:
///
/// - without a local edit, the higher version wins: a confirmed server copy replaces an older
///   cached one, and a reply older than the copy already held is dropped;
/// - a local edit is kept over a server copy at or below its base version, and sent;
/// - a newer server copy with another name is a conflict, shown until `resolveConflict`; one
///   with the same name means the server already has the edit, which is then done.
///
/// One rename per user is on its way at a time: a second rename made meanwhile waits for the
/// reply and is sent on the new version, so the app never conflicts with its own edit.
extension UsersFeature {
  func rename(id: Int, to name: String, _ state: inout State) -> Effect<Action, Never> {
    guard var user = state.users[id: id] else { return .none }
    state.renameError = nil  // a new rename is the user's answer to the last one's error
    if var edit = state.edits[id: id] {
      // Sending: the reply rebases it; a conflict stays one until the user resolves it.
      edit.name = name
      state.edits[id: id] = edit
      user.name = name
      show(user, &state)
      return edit.status == .pending ? send(id: id, &state) : .none
    }
    guard user.name != name else { return .none }
    state.edits.append(
      UserEdit(id: id, name: name, baseVersion: user.version, previousName: user.name))
    user.name = name
    show(user, &state)
    return send(id: id, &state)
  }

  func resolveConflict(id: Int, keep: Keep, _ state: inout State) -> Effect<Action, Never> {
    guard let edit = state.edits[id: id], edit.status == .conflict,
      let serverName = edit.serverName, let serverVersion = edit.serverVersion,
      var user = state.users[id: id]
    else { return .none }
    switch keep {
    case .server:
      state.edits.remove(id: id)
      user.name = serverName
      user.version = serverVersion
      show(user, &state)
      return .none
    case .local:
      // Made on the server's version now, so sending it overwrites that version knowingly.
      state.edits[id: id] = UserEdit(
        id: id, name: edit.name, baseVersion: serverVersion, previousName: serverName)
      user.version = serverVersion
      show(user, &state)
      return send(id: id, &state)
    }
  }

  /// The server answered the rename of `id` to `name` with an error its retries could not
  /// mend: the name rolls back to the one before the edit and the error shows (`renameError`),
  /// unless a later rename is waiting, which is sent instead (the user's latest word wins).
  func renameRefused(
    id: Int, name: String, baseVersion: Int, message: String, _ state: inout State
  ) -> Effect<Action, Never> {
    guard let edit = state.edits[id: id], edit.status == .sending,
      edit.baseVersion == baseVersion
    else { return .none }
    guard edit.name == name else { return send(id: id, &state) }
    state.edits.remove(id: id)
    if let previous = edit.previousName, var user = state.users[id: id] {
      user.name = previous
      show(user, &state)
    }
    state.renameError = message
    return .none
  }

  func renamed(id: Int, name: String, baseVersion: Int, user: User, _ state: inout State)
    -> Effect<Action, Never>
  {
    guard let edit = state.edits[id: id], edit.status == .sending,
      edit.baseVersion == baseVersion
    else {
      // A reply to an edit since resolved or conflicted: just a server copy like any other.
      if state.users[id: id] != nil { reconcile(serverCopy: user, &state) }
      return .none
    }
    guard edit.name != name else {
      state.edits.remove(id: id)
      show(user, &state)
      return .none
    }
    // Renamed again while this one was on its way: send the newer name on the new version.
    state.edits[id: id] = UserEdit(
      id: id, name: edit.name, baseVersion: user.version, previousName: user.name)
    var shown = user
    shown.name = edit.name
    show(shown, &state)
    return send(id: id, &state)
  }

  /// Reconciles a whole list from the server with the list held, and sends the local edits
  /// still pending. Users the server no longer has are dropped, with their edits.
  func merge(serverList: [User], into state: inout State) -> Effect<Action, Never> {
    let held = state.users
    var merged = IdentifiedArray<User>()
    for server in serverList {
      merged.append(reconciled(serverCopy: server, held: held[id: server.id], &state.edits))
    }
    state.edits.removeAll { merged[id: $0.id] == nil }
    state.users = merged
    let pending = state.edits.filter { $0.status == .pending }.map(\.id)
    return .merge(pending.map { send(id: $0, &state) })
  }

  /// Reconciles one server copy (a push, a conflict reply) with the user held.
  func reconcile(serverCopy server: User, _ state: inout State) {
    let shown = reconciled(serverCopy: server, held: state.users[id: server.id], &state.edits)
    show(shown, &state)
  }

  /// The copy to show for `server` given the copy `held`, updating the user's edit.
  private func reconciled(
    serverCopy server: User, held: User?, _ edits: inout IdentifiedArray<UserEdit>
  ) -> User {
    guard var edit = edits[id: server.id] else {
      if let held, held.version > server.version { return held }
      return server
    }
    var local = server
    local.name = edit.name
    local.version = edit.baseVersion
    if server.version < edit.knownVersion || server.version == edit.serverVersion {
      return held ?? local  // nothing newer than what the edit already knows
    }
    if server.version <= edit.baseVersion {
      return local  // the server has not moved: the edit is kept, and sent
    }
    if server.name == edit.name {
      edits.remove(id: server.id)  // the server already has it
      return server
    }
    edit.status = .conflict
    edit.serverName = server.name
    edit.serverVersion = server.version
    edits[id: server.id] = edit
    return local
  }

  /// Sends the edit of user `id`, marking it `sending`.
  private func send(id: Int, _ state: inout State) -> Effect<Action, Never> {
    guard var edit = state.edits[id: id] else { return .none }
    edit.status = .sending
    state.edits[id: id] = edit
    let (name, baseVersion) = (edit.name, edit.baseVersion)
    return .run { [backend, clock, backoff] send in
      do {
        // Offline is not retried: the edit stays pending for the next load, as notes do.
        let user = try await backoff.run(clock: clock, retryingIf: { $0 == .network }) {
          try await backend.renameUser(id: id, name: name, baseVersion: baseVersion)
        }
        await send(.internal(.renamed(id: id, name: name, baseVersion: baseVersion, user: user)))
      } catch BackendError.conflict(let serverName, let serverVersion) {
        await send(
          .internal(
            .renameConflicted(
              id: id, baseVersion: baseVersion, serverName: serverName,
              serverVersion: serverVersion)))
      } catch BackendError.offline {
        await send(.internal(.renameFailed(id: id, baseVersion: baseVersion, gone: false)))
      } catch let error as BackendError {
        guard error != .notFound else {
          await send(.internal(.renameFailed(id: id, baseVersion: baseVersion, gone: true)))
          return
        }
        await send(
          .internal(
            .renameRefused(
              id: id, name: name, baseVersion: baseVersion,
              message: SafeMessage.describing(error, doing: "rename the user"))))
      }
    } catch: { _, send in
      await send(.internal(.renameFailed(id: id, baseVersion: baseVersion, gone: false)))
    }
  }

  /// Puts `user` in the list and in the results where it shows.
  private func show(_ user: User, _ state: inout State) {
    guard state.users[id: user.id] != user else { return }
    state.users[id: user.id] = user
    if state.results[id: user.id] != nil { state.results[id: user.id] = user }
  }
}
