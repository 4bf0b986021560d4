// The timers application: the whole server command line, persistence and its own name.
import StateServer
import Timers

Server.main(name: "timers", version: "1.0.0", features: [Timers().descriptor()])
