//! Scores of the sources: how surely a candidate of each is the publish
//! time (higher wins).

pub const TEXT_LABELLED_NEAR_TITLE: i32 = 95;
pub const META_PUBLISHED: i32 = 90;
pub const JSONLD: i32 = 90;
pub const TIME_MARKED: i32 = 85;
pub const TEXT_NEAR_TITLE: i32 = 80;
pub const FEED: i32 = 75;
pub const TEXT_MARKED: i32 = 70;
pub const TIME_FIRST: i32 = 65;
pub const META_WEAK: i32 = 60;
pub const TEXT_LABELLED: i32 = 55;
pub const URL: i32 = 50;
pub const TEXT_DATE_CLASS: i32 = 45;
pub const TEXT_ARTICLE_EDGE: i32 = 40;
pub const TIME_OTHER: i32 = 30;
/// A publish variable of the page's script (`publish_time`, WeChat's
/// `ct`): what a page without a visible or marked-up date has (WeChat's
/// articles as served, their date written by the script).
pub const SCRIPT: i32 = 25;
/// The `title` of an element that shows a relative phrase (`<span
/// title="2024-11-25 15:05:06">3 天前</span>`, Discuz's and timeago's
/// markup): the time the phrase stands for. Its own score, so that
/// [`super::decide::decide`] knows it: a relative winner takes it.
pub const TITLED: i32 = 24;
/// A modified / updated time: only when nothing else is found.
pub const MODIFIED: i32 = 5;
