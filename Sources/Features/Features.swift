import StateKit
