/// The 50 people the simulated backend serves: the same names on every run and every seed, so
/// walkthroughs and tests can refer to them (`id` 42 always exists).
enum SampleUsers {
  static let firstNames = [
    "Ada", "Callum", "Carla", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
    "Kemi", "Liam", "Mara", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tara",
    "Ugo", "Vera", "Wen", "Ximena", "Yusuf",
  ]
  static let lastNames = [
    "Abara", "Becker", "Castro", "Dubois", "Eriksen", "Fischer", "Garcia", "Hansen", "Ito",
    "Jensen", "Kowalski", "Lopez", "Moreau", "Novak", "Okafor", "Petrov", "Quinn", "Rossi",
    "Sato", "Tanaka",
  ]

  /// Users 1 through `count`; first and last names are paired so that no two are the same.
  static func make(count: Int = 50) -> [User] {
    (1...count).map { id in
      let first = firstNames[(id - 1) % firstNames.count]
      let last = lastNames[((id - 1) * 7) % lastNames.count]
      return User(
        id: id, name: "\(first) \(last)",
        email: "\(first.lowercased()).\(last.lowercased())@example.com", version: 1)
    }
  }
}
