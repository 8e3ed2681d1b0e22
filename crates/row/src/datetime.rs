//! Dates and times.
pub struct Date; pub struct DateTime;
