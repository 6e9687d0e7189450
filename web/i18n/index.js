// The languages the pages have message files for (web/i18n/<tag>.json),
// each with its name in its own language (the language switcher shows it).
// Adding a language: add its message file (every key of en.json) and one
// line here.
export default {
  en: 'English',
  ja: '日本語',
};
