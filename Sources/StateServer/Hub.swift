import JSON
import StateKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Every live connection: the stdio client that owns the process, then the clients attached
/// through `--listen`. Each store's single observer is the hub, which hands each publication to
/// every connection; each connection scopes, queues and coalesces it for its own client, so
/// every client sees the same stores and versions while a stalled one only fills its own queue.
@StateActor
final class Hub {
  let registry: StoreRegistry
  let options: ServerOptions
  let log: Log
  /// The owner first, then attached connections in the order they came. Each store's observer
  /// holds them as they are now, so a change installs every observer anew.
  private(set) var connections: [Connection] = [] {
    didSet {
      for store in registry.openStores { observe(store) }
    }
  }
  private var peers: [ObjectIdentifier: Peer] = [:]
  /// Set once the owner's shutdown began: clients arriving later are closed at once.
  private var ownerEnding = false
  /// The number of the last client attached (they tag their causes with it).
  private var attachedSoFar: Int64 = 0

  init(registry: StoreRegistry, options: ServerOptions, log: Log) {
    self.registry = registry
    self.options = options
    self.log = log
  }

  /// How many clients are attached through the socket now (the stdio client not counted).
  var attachedCount: Int { peers.count }

  func add(owner connection: Connection) {
    connection.hub = self
    connections.insert(connection, at: 0)
  }

  // MARK: Fan-out

  /// Makes the hub the store's observer and lets every connection watch it.
  func attach(_ store: any AnyStore) {
    observe(store)
    for connection in connections { connection.watch(store) }
  }

  /// Installs the store's observer, which hands each publication to every connection in order.
  ///
  /// The observer captures the connections as they are now (``connections`` installs it anew
  /// when they change): a captured reference is used where it lies, where reading the hub's
  /// array per publication retained and released the array and each connection (atomic
  /// operations, per publication and client). The capture is strong, which makes a cycle (store,
  /// observer, connection, registry, store) that ends when the store closes and drops its
  /// observer; every store closes at shutdown, and a connection that ends is dropped from every
  /// observer at once.
  ///
  /// The hub and the store are unowned, not weak (this runs once per reduced action), and
  /// unchecked: the store owns the closure, so it is alive whenever the closure runs, and the
  /// hub outlives every store's observer (the shutdown closes every store, which drops its
  /// observer, before the server's `run` returns and releases the hub). The store is handed on
  /// as a closure: reading an unowned(unsafe) reference retains it, and only a subscription to a
  /// path below the root needs it.
  private func observe(_ store: any AnyStore) {
    let connections = connections
    store.holdingObserver = { [unowned(unsafe) self, unowned(unsafe) store] publication, held in
      for connection in connections { connection.publishHolding(publication, held, of: { store }) }
      if !publication.events.isEmpty && !self.peers.isEmpty { self.dropClientsFarBehind() }
    }
    guard connections.count == 1 else {
      store.observer = { [unowned(unsafe) self, unowned(unsafe) store] publication in
        for connection in connections { connection.publish(publication, of: { store }) }
        if !publication.events.isEmpty && !self.peers.isEmpty { self.dropClientsFarBehind() }
      }
      return
    }
    // The usual case, the stdio client alone.
    let only = connections[0]
    store.observer = { [unowned(unsafe) self, unowned(unsafe) store] publication in
      only.publish(publication, of: { store })
      if !publication.events.isEmpty && !self.peers.isEmpty { self.dropClientsFarBehind() }
    }
  }

  /// One client's input batch is being served: the other clients' lines are committed once at
  /// its end, not once per publication (a commit takes the queue's lock, and a stalled client's
  /// queue merges a whole batch of patches at once).
  func holdCommits(except sender: Connection) {
    guard connections.count > 1 else { return }
    for connection in connections where connection !== sender {
      connection.buffer.beginHolding()
    }
  }

  func commitHeld(except sender: Connection) {
    guard connections.count > 1 else { return }
    for connection in connections where connection !== sender {
      connection.buffer.endHolding()
    }
  }

  /// A client closed a store: every other client that watched it hears `store/closed`.
  func storeClosed(_ storeID: String, by closer: Connection) {
    for connection in connections where connection !== closer {
      connection.storeClosed(storeID, reason: "closed")
    }
  }

  // MARK: Attached clients

  /// Serves a client accepted on the socket: its own reader, inbox, queue and writer, as the
  /// stdio client has, on the connected descriptor.
  func accept(_ fd: Int32) {
    guard !ownerEnding else {
      close(fd)
      return
    }
    let queue = OutputQueue(
      maxMessages: options.maxQueuedMessages, maxBytes: options.maxQueuedOutputBytes)
    let connection = Connection(registry: registry, output: queue, options: options, log: log)
    attachedSoFar += 1
    connection.role = .attached(attachedSoFar)
    connection.hub = self
    // One recording for the process: stores an attached client opens or closes are recorded too.
    connection.recorder = connections.first?.recorder
    for store in registry.openStores { connection.watch(store) }
    let peer = Peer(fd: fd, connection: connection)
    // Weak: the inbox belongs to the connection, and a strong capture would keep both alive
    // after the client is gone.
    let inbox = Inbox(capacity: 1024, maxBytes: options.maxQueuedInputBytes) {
      [weak connection] in
      Task { @StateActor in connection?.drainInbox() }
    }
    connection.inbox = inbox
    connections.append(connection)
    peers[ObjectIdentifier(connection)] = peer
    log.info("client attached", ["clients": String(peers.count)])
    StdoutWriter(fd: fd, queue: queue, log: log) { [log] code in
      log.info(
        "an attached client stopped reading; its output is discarded", ["errno": String(code)])
    }.start()
    LineReader(
      fd: fd, maxMessageBytes: options.maxMessageBytes, inbox: inbox, output: queue,
      onEnd: { Task { @StateActor in peer.readerEnded.open() } }
    ).start()
  }

  /// An attached client's end of input or `shutdown`: only that connection ends.
  func detach(_ connection: Connection, reason: String) {
    guard let peer = peers[ObjectIdentifier(connection)], !peer.ending else { return }
    peer.ending = true
    Task { await self.end(peer, reason: reason, storesClosed: false) }
  }

  /// Events never merge: an attached client that stopped reading would hold every event of
  /// every client's actions. Past `maxQueuedMessages` it is cut off from the fan-out and
  /// closed (its reader already paused at that bound, so its own requests cannot be the cause).
  private func dropClientsFarBehind() {
    for peer in peers.values
    where !peer.ending && peer.connection.output.queuedMessages > options.maxQueuedMessages {
      log.warning(
        "an attached client stopped reading; closing it",
        ["queued": String(options.maxQueuedMessages)])
      connections.removeAll { $0 === peer.connection }
      detach(peer.connection, reason: "too far behind")
    }
  }

  /// The owner's shutdown began: attached clients get -32010 for new requests from now on.
  func ownerBeganShutdown() {
    ownerEnding = true
    for peer in peers.values where !peer.ending { _ = peer.connection.lifecycle.drain() }
  }

  /// After the owner drained: each attached client hears `store/closed` for the stores it
  /// watched and is closed; returns once every one is.
  func closeAttached() async {
    ownerEnding = true
    let remaining = Array(peers.values)
    // Side by side: each stalled client costs at most the drain timeout, not one each.
    var endings: [Task<Void, Never>] = []
    for peer in remaining {
      if peer.ending {
        endings.append(Task { await peer.closed.wait() })
      } else {
        peer.ending = true
        endings.append(Task { await self.end(peer, reason: "the owner ended", storesClosed: true) })
      }
    }
    for ending in endings { await ending.value }
  }

  /// Ends one attached connection without leaking: its pending requests are answered (or
  /// refused -32010 after the drain timeout), its output flushed for at most the drain timeout,
  /// then the socket is shut down, which wakes its reader and writer threads, and closed only
  /// once the reader stopped using it.
  private func end(_ peer: Peer, reason: String, storesClosed: Bool) async {
    let connection = peer.connection
    _ = connection.lifecycle.drain()
    let shutdownReplies = connection.lifecycle.shutdownReplies
    let waiting = connection.router.unresolved.filter { reply in
      !shutdownReplies.contains { $0 === reply }
    }
    _ = await Gate.waitAtMost(options.drainTimeout) {
      for reply in waiting { await reply.resolved() }
    }
    for reply in waiting { reply.fail(.shuttingDown) }
    if storesClosed {
      for storeID in Array(connection.fanout.subscriptions.keys).sorted() {
        connection.storeClosed(storeID, reason: "shutdown")
      }
    }
    for reply in connection.lifecycle.shutdownReplies { reply.succeed([:]) }
    connection.commit()
    connection.output.finish()
    // A client that stopped reading gets the drain timeout, then its socket is shut down: the
    // writer's blocked write(2) fails, and it discards the rest.
    let flushed = await Gate.waitAtMost(options.drainTimeout) {
      await connection.output.drained()
    }
    shutdown(peer.fd, Int32(SHUT_RDWR))
    if !flushed { await connection.output.drained() }
    await peer.readerEnded.wait()
    close(peer.fd)
    connection.inbox = nil
    connection.router.forgetAll()
    connection.stop(0)
    connection.fanout.subscriptions = [:]
    connections.removeAll { $0 === connection }
    peers[ObjectIdentifier(connection)] = nil
    log.info("client detached", ["reason": reason, "clients": String(peers.count)])
    peer.closed.open()
  }
}

/// What the hub keeps of one attached client besides its connection.
@StateActor
private final class Peer {
  let fd: Int32
  let connection: Connection
  /// Whether the connection's end has begun (it ends once).
  var ending = false
  /// Opens when the reader thread has returned: only then may the descriptor be closed, or a
  /// descriptor number reused by a later `open` could be read from.
  let readerEnded = Gate()
  let closed = Gate()

  init(fd: Int32, connection: Connection) {
    self.fd = fd
    self.connection = connection
  }
}
