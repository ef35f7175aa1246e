import Testing

@testable import SesameBytes

@Suite struct HTMLTextTests {
    @Test func theFiveCharactersBecomeEntities() {
        #expect(
            HTMLText.escape(#"<a href="x" title='y'>&</a>"#)
                == "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;")
    }

    @Test func everythingElseStaysAsItIs() {
        #expect(HTMLText.escape("Zoë: 🔑 = ok; 1 + 1 # 2 / 3") == "Zoë: 🔑 = ok; 1 + 1 # 2 / 3")
        #expect(HTMLText.escape("") == "")
    }
}
