import Features
import StateServer
