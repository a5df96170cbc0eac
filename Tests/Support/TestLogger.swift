import Logging

extension Logger {
    /// A logger for tests: warnings and above, unless `SURGE_TEST_LOG_LEVEL` says otherwise.
    public static func test(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = TestEnvironment.logLevel
        return logger
    }
}
