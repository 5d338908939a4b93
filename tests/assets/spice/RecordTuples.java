package edu.anu.spice;

import java.io.FileReader;
import java.io.FileWriter;
import java.net.URL;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;

import org.json.simple.JSONArray;
import org.json.simple.JSONObject;
import org.json.simple.parser.JSONParser;

import edu.cmu.meteor.aligner.SynonymDictionary;
import edu.cmu.meteor.util.Constants;

/** Scores hand-written tuples with SPICE 1.0's own scene graphs, matching and JSON serialisation (everything the
 *  jar does after its CoreNLP parse). Usage: RecordTuples tuples.json out-synsets.json out-nosynsets.json */
public class RecordTuples {
    static SceneGraph graph(SynonymDictionary synonyms, boolean synsets, JSONArray captions) {
        SceneGraph scene = new SceneGraph(synonyms, synsets);
        for (Object caption : captions) {
            for (Object tuple : (JSONArray) caption) {
                ArrayList<String> words = new ArrayList<String>();
                for (Object word : (JSONArray) tuple) words.add((String) word);
                scene.addTuple(words);
            }
        }
        return scene;
    }

    public static void main(String[] args) throws Exception {
        URL dir = Constants.DEFAULT_SYN_DIR_URL;
        SynonymDictionary synonyms = new SynonymDictionary(new URL(dir + "/english.exceptions"),
                new URL(dir + "/english.synsets"), new URL(dir + "/english.relations"));
        JSONArray items = (JSONArray) new JSONParser().parse(new FileReader(args[0]));
        for (int pass = 0; pass < 2; ++pass) {
            boolean synsets = pass == 0;
            Map<String, TupleFilter> filters = new HashMap<String, TupleFilter>();
            filters.put("Object", TupleFilter.objectFilter);
            filters.put("Attribute", TupleFilter.attributeFilter);
            filters.put("Relation", TupleFilter.relationFilter);
            filters.put("Cardinality", TupleFilter.cardinalityFilter);
            filters.put("Color", TupleFilter.colorFilter);
            filters.put("Size", TupleFilter.sizeFilter);
            SpiceStats stats = new SpiceStats(filters, false);
            for (int i = 0; i < items.size(); ++i) {
                JSONObject item = (JSONObject) items.get(i);
                JSONArray test = new JSONArray();
                test.add(item.get("test_tuples"));
                stats.score(i, graph(synonyms, synsets, test), graph(synonyms, synsets, (JSONArray) item.get("ref_tuples")), synsets);
            }
            FileWriter out = new FileWriter(args[1 + pass]);
            out.write(stats.toJSONString());
            out.close();
        }
    }
}
