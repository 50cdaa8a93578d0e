#define CAF_SUITE json
#include <caf/test/unit_test.hpp>

#include "messages/json.hpp"

using namespace jp;

CAF_TEST(parse and dump round trip keeps order and types) {
  auto text = R"({"b":1,"a":[true,null,"x\ny",2.5],"c":{"d":-3}})";
  auto v = Json::parse(text);
  CAF_REQUIRE(v.ok());
  CAF_CHECK_EQUAL(v->dump(), text);
  CAF_CHECK_EQUAL(v->find("c")->find("d")->as_int(), -3);
}

CAF_TEST(invalid JSON is an error with a message) {
  auto v = Json::parse("{\"a\":");
  CAF_REQUIRE(!v.ok());
  CAF_CHECK(v.error().find("invalid JSON") != std::string::npos);
}

CAF_TEST(invalid UTF-8 becomes U+FFFD in JSON strings) {
  std::string bad = "ok\xff\xfe!";
  CAF_CHECK_EQUAL(json_quote(bad), "\"ok\xEF\xBF\xBD\xEF\xBF\xBD!\"");
  auto back = Json::parse(json_quote(bad));
  CAF_REQUIRE(back.ok());
  CAF_CHECK_EQUAL(back->as_string(), "ok\xEF\xBF\xBD\xEF\xBF\xBD!");
}

CAF_TEST(an escaped UTF-16 half without its other half reads as U+FFFD and the rest stays) {
  // A model's text cut between the halves of a pair: valid JSON (RFC 8259 8.2), which
  // simdjson refuses (a high half) or decodes to no UTF-8 (a low half).
  auto v = Json::parse(R"({"t":"a\ud83d","u":"\ude00b","k":"\uD83D\uDE00","w":"\ud800\u0041",)"
                       R"("e":"\\ud800 \" \ud83d"})");
  CAF_REQUIRE(v.ok());
  CAF_CHECK_EQUAL(v->find("t")->as_string(), "a\xEF\xBF\xBD");
  CAF_CHECK_EQUAL(v->find("u")->as_string(), "\xEF\xBF\xBD" "b");
  CAF_CHECK_EQUAL(v->find("k")->as_string(), "\xF0\x9F\x98\x80"); // a pair is one character
  CAF_CHECK_EQUAL(v->find("w")->as_string(), "\xEF\xBF\xBD" "A");
  // An escaped backslash before "ud800" is text, and an escaped quote keeps the string open.
  CAF_CHECK_EQUAL(v->find("e")->as_string(), "\\ud800 \" \xEF\xBF\xBD");
  // Keys too, and what is no JSON stays an error.
  auto key = Json::parse(R"({"\udc00":1})");
  CAF_REQUIRE(key.ok());
  CAF_CHECK(key->find("\xEF\xBF\xBD") != nullptr);
  CAF_CHECK(!Json::parse(R"({"a":"\ud800)").ok());
}

CAF_TEST(control characters are escaped) {
  CAF_CHECK_EQUAL(json_quote(std::string("a\x01") + "\t\""), R"("a\u0001\t\"")");
}

CAF_TEST(each escape is written within plain text and every ASCII byte reads back as itself) {
  CAF_CHECK_EQUAL(json_quote("a\"b\\c\nd\re\tf\bg\fh\x1fi\x7fj"),
                  "\"a\\\"b\\\\c\\nd\\re\\tf\\bg\\fh\\u001fi\x7fj\"");
  CAF_CHECK_EQUAL(json_quote("\xc3\xa9t\xc3\xa9 \"\xe2\x82\xac\""), "\"\xc3\xa9t\xc3\xa9 \\\"\xe2\x82\xac\\\"\"");
  for (int b = 0; b < 0x80; ++b) {
    std::string s = "plain " + std::string(1, static_cast<char>(b)) + " text";
    auto back = Json::parse(json_quote(s));
    CAF_REQUIRE(back.ok());
    CAF_CHECK_EQUAL(back->as_string(), s);
  }
}

CAF_TEST(last_line_of gives the last non empty line without its newlines) {
  CAF_CHECK_EQUAL(last_line_of("one\ntwo\n\n"), "two");
  CAF_CHECK_EQUAL(last_line_of("only"), "only");
  CAF_CHECK_EQUAL(last_line_of("\n\n"), "");
  CAF_CHECK_EQUAL(last_line_of(""), "");
}

CAF_TEST(a number out of range is said as such) {
  // Valid JSON all the same (a model's 1e309 or 99999999999999999999): not "invalid".
  for (auto text : {R"({"wait_ms":99999999999999999999})", R"({"wait_ms":1e309})"}) {
    auto parsed = Json::parse(text);
    CAF_REQUIRE(!parsed.ok());
    CAF_CHECK_EQUAL(parsed.error(), "invalid JSON, or a number in it out of range: a number without a fraction or "
                                    "an exponent is read only up to 18446744073709551615 (write a larger one with an "
                                    "exponent, 1e20), any other up to about 1.8e308");
  }
}
