#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Dates as RFC 3339 / ISO 8601 strings, the Codable bridge's wire form for `Date`: UTC to
/// the millisecond, always with the three digits (`2026-11-29T17:46:39.000Z`,
/// `2026-11-29T17:46:39.250Z`), the fixed-width form of JavaScript's `toISOString()` and the
/// form the reference app's timestamps had when they were strings, so a client comparing or
/// sorting them as text keeps working. Reading accepts any number of fraction digits (none
/// too) and a `Z` or `±hh:mm` offset; up to three digits read back the very `Date` that
/// `Date(timeIntervalSince1970: Double(milliseconds) / 1000)` makes, so a whole-millisecond
/// date survives the wire and a snapshot exactly (`==`).
///
/// Written by hand rather than with a date formatter: it is exact, allocation-free but for the
/// result, and does not depend on a calendar or locale.
enum ISO8601Date {
  static func string(from date: Date) -> String {
    let text = String(unsafeUninitializedCapacity: 24) { buffer in
      write(date, into: buffer) ? 24 : 0
    }
    guard text.isEmpty else { return text }
    // Outside four-digit years ISO 8601 needs an agreed expansion; say what it is instead.
    let (seconds, _) = wholeSeconds(of: date)
    let (days, secondOfDay) = floorDivision(seconds, 86_400)
    let (year, month, day) = civil(fromDays: days)
    return "\(year)-\(month)-\(day)T\(secondOfDay)s"
  }

  /// Fills the 24 bytes of `buffer` with `date`'s text, as `string(from:)` gives it; false,
  /// leaving them, when its year has no four digits. The writer of ``JSONTextEncoder`` puts a
  /// date's text straight where it goes, rather than in a string made for it (an allocation:
  /// 24 bytes are past what a `String` holds inline).
  static func write(_ date: Date, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Bool {
    precondition(buffer.count >= 24, "a date's text is 24 bytes")
    let (seconds, milliseconds) = wholeSeconds(of: date)
    let (days, secondOfDay) = floorDivision(seconds, 86_400)
    let (year, month, day) = civil(fromDays: days)
    guard (0...9999).contains(year) else { return false }
    // "YYYY-MM-DDThh:mm:ss.sssZ" is 24 ASCII bytes, filled in place; digits by division by
    // constants (multiplications), no loop.
    guard let text = buffer.baseAddress else { return false }
    func digits(_ value: Int64, _ width: Int, at position: Int) {
      var value = Int(truncatingIfNeeded: value)
      for offset in (0..<width).reversed() {
        text[position + offset] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
        value /= 10
      }
    }
    digits(year, 4, at: 0)
    text[4] = UInt8(ascii: "-")
    digits(month, 2, at: 5)
    text[7] = UInt8(ascii: "-")
    digits(day, 2, at: 8)
    text[10] = UInt8(ascii: "T")
    digits(secondOfDay / 3600, 2, at: 11)
    text[13] = UInt8(ascii: ":")
    digits(secondOfDay / 60 % 60, 2, at: 14)
    text[16] = UInt8(ascii: ":")
    digits(secondOfDay % 60, 2, at: 17)
    text[19] = UInt8(ascii: ".")
    digits(milliseconds, 3, at: 20)
    text[23] = UInt8(ascii: "Z")
    return true
  }

  /// The whole seconds since 1970 of `date` and its milliseconds, rounded to the nearest.
  private static func wholeSeconds(of date: Date) -> (seconds: Int64, milliseconds: Int64) {
    let interval = date.timeIntervalSince1970
    var seconds = Int64(interval.rounded(.down))
    var milliseconds = Int64(((interval - Double(seconds)) * 1000).rounded())
    if milliseconds == 1000 {
      seconds += 1
      milliseconds = 0
    }
    return (seconds, milliseconds)
  }

  /// The date written in `text`, or `nil` when it is not `YYYY-MM-DDThh:mm:ss[.f+](Z|±hh:mm)`.
  static func date(from text: String) -> Date? {
    // Read in the string's own UTF-8 (a parsed string is already contiguous): copying it into
    // an array first was an allocation and a free per date, two per note of a large state. Lent
    // rather than copied: `withUTF8` needs a `var`, a copy, whose retain and release (atomic)
    // were most of the time of a date.
    if let date = text.utf8.withContiguousStorageIfAvailable({ date(fromUTF8: $0) }) {
      return date
    }
    var text = text
    return text.withUTF8 { date(fromUTF8: $0) }
  }

  private static func date(fromUTF8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
    if let date = canonicalDate(fromUTF8: bytes) { return date }
    var position = 0

    func number(_ digits: Int) -> Int64? {
      guard position + digits <= bytes.count else { return nil }
      var value: Int64 = 0
      for _ in 0..<digits {
        let digit = bytes[position] &- UInt8(ascii: "0")
        guard digit < 10 else { return nil }
        value = value * 10 + Int64(digit)
        position += 1
      }
      return value
    }
    func expect(_ characters: StaticString) -> Bool {
      guard position < bytes.count,
        characters.withUTF8Buffer({ $0.contains(bytes[position]) })
      else { return false }
      position += 1
      return true
    }

    guard let year = number(4), expect("-"), let month = number(2), expect("-"),
      let day = number(2), expect("Tt"), let hour = number(2), expect(":"),
      let minute = number(2), expect(":"), let second = number(2),
      (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day),
      hour < 24, minute < 60, second < 60
    else { return nil }

    // Up to three digits count whole milliseconds (exact); more add a binary fraction.
    var milliseconds: Int64 = 0
    var fraction = 0.0
    if expect(".") {
      var scale = 0.0001
      let start = position
      while position < bytes.count, bytes[position] &- UInt8(ascii: "0") < 10 {
        let digit = Int64(bytes[position] - UInt8(ascii: "0"))
        switch position - start {
        case 0: milliseconds += digit * 100
        case 1: milliseconds += digit * 10
        case 2: milliseconds += digit
        default:
          fraction += Double(digit) * scale
          scale /= 10
        }
        position += 1
      }
      guard position > start else { return nil }
    }

    var offset: Int64 = 0
    if expect("Zz") {
      offset = 0
    } else if position < bytes.count,
      bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")
    {
      let sign: Int64 = bytes[position] == UInt8(ascii: "-") ? -1 : 1
      position += 1
      guard let offsetHours = number(2), expect(":"), let offsetMinutes = number(2),
        offsetHours < 24, offsetMinutes < 60
      else { return nil }
      offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
    } else {
      return nil
    }
    guard position == bytes.count else { return nil }

    let days = self.days(fromCivil: year, month, day)
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
    let whole = Double(seconds * 1000 + milliseconds) / 1000
    return Date(timeIntervalSince1970: fraction == 0 ? whole : whole + fraction)
  }

  /// The date in `bytes` when they are exactly the form ``string(from:)`` writes
  /// (`YYYY-MM-DDThh:mm:ss.sssZ`), read at fixed positions; `nil` for any other text, which
  /// ``date(fromUTF8:)`` then reads in full (or refuses). Every date a state's snapshot or a
  /// client's mirror holds has this form, and the general reading's digit-by-digit scan, in
  /// closures over a position, cost several times this one per date of a large state. The date
  /// made is the general reading's: the same checks and the same arithmetic.
  private static func canonicalDate(fromUTF8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
    guard bytes.count == 24, let text = bytes.baseAddress, text[4] == UInt8(ascii: "-"),
      text[7] == UInt8(ascii: "-"), text[10] == UInt8(ascii: "T"), text[13] == UInt8(ascii: ":"),
      text[16] == UInt8(ascii: ":"), text[19] == UInt8(ascii: "."), text[23] == UInt8(ascii: "Z"),
      let year = fixedDigits(text, 0, 4), let month = fixedDigits(text, 5, 2),
      let day = fixedDigits(text, 8, 2), let hour = fixedDigits(text, 11, 2),
      let minute = fixedDigits(text, 14, 2), let second = fixedDigits(text, 17, 2),
      let milliseconds = fixedDigits(text, 20, 3),
      (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day),
      hour < 24, minute < 60, second < 60
    else { return nil }
    let days = self.days(fromCivil: year, month, day)
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second
    return Date(timeIntervalSince1970: Double(seconds * 1000 + milliseconds) / 1000)
  }

  /// The decimal number of the `count` ASCII digits at `start`, or `nil` when one is not a digit.
  @inline(__always)
  private static func fixedDigits(_ text: UnsafePointer<UInt8>, _ start: Int, _ count: Int)
    -> Int64?
  {
    var value: Int64 = 0
    for position in start..<(start + count) {
      let digit = text[position] &- UInt8(ascii: "0")
      guard digit < 10 else { return nil }
      value = value &* 10 &+ Int64(digit)
    }
    return value
  }

  private static func floorDivision(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
    let (quotient, remainder) = a.quotientAndRemainder(dividingBy: b)
    return remainder < 0 ? (quotient - 1, remainder + b) : (quotient, remainder)
  }

  private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
    switch month {
    case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  // Howard Hinnant's days_from_civil / civil_from_days: proleptic Gregorian, day 0 = 1970-01-01.
  private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }
}
