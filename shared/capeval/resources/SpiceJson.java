import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * SPICE 1.0's batch scorer (edu.anu.spice.SpiceScorer) with its per-image results written as the jar's own JSON,
 * for Java 15 and later. The jar's "-out" writer pretty-prints through the JavaScript engine (Nashorn), which
 * Java 15 removed, so there it fails after all the scoring; this runs the same scoring and writes what the
 * scorer serialises, without pretty-printing. It takes the jar's arguments. capeval runs it in Java's
 * source-file mode ("java -cp spice-1.0.jar:... SpiceJson.java input.json -out output.json -subset -silent").
 *
 * The classes are reached by reflection: in source-file mode this class has its own class loader, so the
 * jar's package-private constructors cannot be called directly.
 */
public class SpiceJson {
    public static void main(String[] args) throws Throwable {
        try {
            Class<?> argumentsClass = Class.forName("edu.anu.spice.SpiceArguments");
            Constructor<?> parse = argumentsClass.getDeclaredConstructor(String[].class);
            parse.setAccessible(true);
            Object arguments = parse.newInstance((Object) args);
            Field output = argumentsClass.getField("outputPath");
            String target = (String) output.get(arguments);
            output.set(arguments, null);  // the jar's writer is the part that needs the JavaScript engine
            argumentsClass.getField("silent").set(arguments, Boolean.TRUE);

            Class<?> scorerClass = Class.forName("edu.anu.spice.SpiceScorer");
            Constructor<?> create = scorerClass.getDeclaredConstructor();
            create.setAccessible(true);
            Object scorer = create.newInstance();
            scorerClass.getMethod("scoreBatch", argumentsClass).invoke(scorer, arguments);
            Object stats = scorerClass.getField("stats").get(scorer);
            String json = (String) stats.getClass().getMethod("toJSONString").invoke(stats);
            Files.write(Paths.get(target), json.getBytes(StandardCharsets.UTF_8));
        } catch (InvocationTargetException wrapped) {
            throw wrapped.getCause();  // the scorer's own error (an OutOfMemoryError, a parser failure), not the wrapper
        }
    }
}
